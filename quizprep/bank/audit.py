"""Checks that look across questions once every bank has been validated: wrong answers that a
numeric question's tolerance would accept, and prompts so alike that they ask the same thing."""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Iterable, Iterator

from quizprep.bank import values
from quizprep.bank.formula import FormulaError, format_number
from quizprep.bank.model import BankError, NumericQuestion, Question
from quizprep.bank.numeric import evaluate_draw

DEFAULT_SIMILARITY = 0.6

# Words that carry no topic: two prompts sharing only these are not alike.
_FILLER_WORDS = frozenset(
    "a an and are as at be by do does for from how in is it its of on or that the this to what when "
    "which why with".split()
)
_WORD = re.compile(r"[a-z0-9_]+")


def wrong_answers_accepted(questions: Iterable[Question]) -> Iterator[BankError]:
    """One error per listed wrong answer that the tolerance accepts as right in some draw. The
    draws are the validator's (all of them, or its fixed sample when there are too many), within
    the same per-file work budget, so a hostile bank costs this check no more than validation."""
    by_file: dict[str, list[NumericQuestion]] = {}
    for question in questions:
        if isinstance(question, NumericQuestion) and question.wrong_answers:
            by_file.setdefault(question.source.file, []).append(question)
    for numeric in by_file.values():
        granted = values.share_draws(
            [(values.draw_count(q.params), values.draw_cost(q.params, _formula_steps(q))) for q in numeric])
        for question, draws in zip(numeric, granted):
            yield from _accepted_in_some_draw(question, draws)


def _formula_steps(question: NumericQuestion) -> int:
    formulas = [f for _, f in question.derived] + [question.answer]
    formulas += [wrong.formula for wrong in question.wrong_answers]
    return sum(f.size for f in formulas if f is not None)


def _accepted_in_some_draw(question: NumericQuestion, draws: int) -> Iterator[BankError]:
    assert question.answer is not None
    pending = list(question.wrong_answers)
    for draw in values.sample_draws(question.params, draws) if draws else ():
        try:
            env = evaluate_draw(question.derived, question.answer, draw)
            accepted = [w for w in pending
                        if question.tolerance.accepts(float(w.formula.evaluate(env)), float(env["answer"]))]
        except FormulaError:
            return  # the validator has already reported a formula that fails
        for wrong in accepted:
            pending.remove(wrong)
            shown = ", ".join(f"{name}={format_number(value)}" for name, value in draw.items())
            yield BankError(
                question.source.file, question.source.line, question.id,
                f"wrong answer {wrong.formula.source!r} is within the tolerance {question.tolerance} "
                f"of the answer for the draw {shown}, so the quiz would mark it correct",
            )
        if not pending:
            return


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
