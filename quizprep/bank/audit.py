"""Checks that look across questions once every bank has been validated: wrong answers that a
numeric question's tolerance would accept (listed ones are errors, generic slips warnings), and
prompts so alike that they ask the same thing."""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterable, Iterator

from quizprep.bank import values
from quizprep.bank.formula import FormulaError, Number, format_number
from quizprep.bank.model import BankError, NumericQuestion, Question
from quizprep.bank.numeric import evaluate_draw
from quizprep.bank.slips import FACTOR_OF_TWO, GENERIC_SLIPS

DEFAULT_SIMILARITY = 0.6

# Words that carry no topic: two prompts sharing only these are not alike.
_FILLER_WORDS = frozenset(
    "a an and are as at be by do does for from how in is it its of on or that the this to what when "
    "which why with".split()
)
_WORD = re.compile(r"[a-z0-9_]+")


Env = dict[str, Number]
MAX_COUNT = 10**7


@dataclass(frozen=True)
class Leak:
    """A wrong answer that the tolerance accepts in one draw: a listed one (an error) or a
    generic slip (a warning)."""

    question: NumericQuestion
    what: str
    draw: dict[str, Number]
    listed: bool

    def error(self) -> BankError:
        shown = ", ".join(f"{name}={format_number(value)}" for name, value in self.draw.items())
        kind = "wrong answer" if self.listed else "the slip"
        return BankError(
            self.question.source.file, self.question.source.line, self.question.id,
            f"{kind} {self.what} is within the tolerance {self.question.tolerance} of the answer for "
            f"the draw {shown}, so the quiz would mark it correct",
        )


def audited_draws(questions: Iterable[Question]) -> dict[str, list[Env]]:
    """Every numeric question's evaluated draws (each with every derived value, the answer and
    each listed wrong answer under its formula's source): every combination or
    values.AUDIT_DRAWS of them, within half the validator's per-file work budget, so that a
    hostile bank costs the audit at most half as much as validation. A question whose formulas
    fail is left out: the validator has already reported it."""
    by_file: dict[str, list[NumericQuestion]] = {}
    for question in questions:
        if isinstance(question, NumericQuestion):
            by_file.setdefault(question.source.file, []).append(question)
    evaluated: dict[str, list[Env]] = {}
    for numeric in by_file.values():
        granted = values.share_draws(
            [(values.audit_count(q.params), values.draw_cost(q.params, _formula_steps(q))) for q in numeric],
            values.FILE_WORK_BUDGET // 2)
        for question, draws in zip(numeric, granted):
            try:
                evaluated[question.id] = [_evaluated(question, draw)
                                          for draw in (values.sample_draws(question.params, draws) if draws else ())]
            except FormulaError:
                continue
    return evaluated


def _evaluated(question: NumericQuestion, draw: dict[str, Number]) -> Env:
    assert question.answer is not None
    env = evaluate_draw(question.derived, question.answer, draw)
    env.update({wrong.formula.source: wrong.formula.evaluate(env) for wrong in question.wrong_answers})
    return env


def _formula_steps(question: NumericQuestion) -> int:
    formulas = [f for _, f in question.derived] + [question.answer]
    formulas += [wrong.formula for wrong in question.wrong_answers]
    return sum(f.size for f in formulas if f is not None)


def tolerance_leaks(questions: Iterable[Question], evaluated: dict[str, list[Env]]) -> Iterator[Leak]:
    """The first draw in which each listed wrong answer, and each generic slip (×2, ½, GB for GiB
    and the like, ±1 on a whole count), is accepted as right."""
    for question in questions:
        if isinstance(question, NumericQuestion) and question.id in evaluated:
            yield from _leaks(question, evaluated[question.id])


def _leaks(question: NumericQuestion, envs: list[Env]) -> Iterator[Leak]:
    params = [p.name for p in question.params]
    counts = question.unit == "" and all(_whole_count(env["answer"]) for env in envs)
    pending: dict[str, tuple[bool, Callable[[Env], float]]] = {
        repr(wrong.formula.source): (True, partial(_value_of, wrong.formula.source))
        for wrong in question.wrong_answers
    }
    for ratio, message in GENERIC_SLIPS.get(question.unit, ()) + FACTOR_OF_TWO:
        # A purely relative tolerance accepts k × answer in no draw at all when |k − 1| exceeds it
        # (a hair of margin for rounding): most questions skip every draw for most slips.
        if question.tolerance.absolute or abs(ratio - 1) <= question.tolerance.relative * (1 + 1e-9):
            label = message.split(":")[0].replace("Off by ", "")
            pending.setdefault(label, (False, partial(_answer_times, ratio)))
    if counts:
        for step in (1, -1):
            pending[f"{step:+d} on a count"] = (False, partial(_answer_plus, step))
    for env in envs:
        answer = float(env["answer"])
        for what, (listed, slip) in list(pending.items()):
            value = slip(env)
            if not listed and (value == answer or (counts and not value.is_integer())):
                continue  # a slip that changes nothing here, or a fraction where only whole counts are typed
            if question.tolerance.accepts(value, answer):
                del pending[what]
                yield Leak(question, what, {name: env[name] for name in params}, listed)
        if not pending:
            return


def _value_of(source: str, env: Env) -> float:
    """A listed wrong answer's value in a draw: its formula is evaluated under its source."""
    return float(env[source])


def _answer_times(ratio: float, env: Env) -> float:
    return float(env["answer"]) * ratio


def _answer_plus(step: int, env: Env) -> float:
    return float(env["answer"]) + step


def _whole_count(answer: Number) -> bool:
    """Whether an answer counts whole things, so that off by one is a slip: an integer small
    enough to be typed out digit by digit."""
    return float(answer).is_integer() and abs(answer) < MAX_COUNT


def wrong_answers_accepted(questions: Iterable[Question]) -> Iterator[BankError]:
    """One error per listed wrong answer that the tolerance accepts as right in some draw."""
    questions = list(questions)
    for leak in tolerance_leaks(questions, audited_draws(questions)):
        if leak.listed:
            yield leak.error()


@dataclass(frozen=True)
class SimilarPair:
    first: Question
    second: Question
    score: float

    def __str__(self) -> str:
        return (f"{self.first.source}: [{self.first.id}] prompt is {self.score:.0%} like "
                f"[{self.second.id}] at {self.second.source}")

    def to_json(self) -> dict[str, object]:
        return {
            "score": round(self.score, 3),
            "first": {"file": self.first.source.file, "line": self.first.source.line, "id": self.first.id},
            "second": {"file": self.second.source.file, "line": self.second.source.line, "id": self.second.id},
        }


def prompt_words(prompt: str) -> frozenset[str]:
    """The distinct words of a prompt, lower-cased, code included, filler words left out."""
    return frozenset(word for word in _WORD.findall(prompt.lower()) if word not in _FILLER_WORDS)


def similarity(first: frozenset[str], second: frozenset[str]) -> float:
    """Jaccard index: the share of the two prompts' distinct words that both use."""
    union = len(first | second)
    return len(first & second) / union if union else 1.0


def similar_prompts(questions: Iterable[Question], threshold: float = DEFAULT_SIMILARITY) -> list[SimilarPair]:
    """Every pair of questions whose prompts score at least `threshold`, most alike first."""
    worded = [(question, prompt_words(question.prompt)) for question in questions]
    pairs = [
        SimilarPair(first, second, score)
        for (first, first_words), (second, second_words) in itertools.combinations(worded, 2)
        if (score := similarity(first_words, second_words)) >= threshold
    ]
    return sorted(pairs, key=lambda pair: -pair.score)
