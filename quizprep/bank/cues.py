"""Form cues: ways a question gives its answer away to someone who does not know it. Each is a
warning of `quizprep check` (an error with `--strict`):

- the correct option of a single-answer question is the longest by a clear margin (a quarter
  longer than the next and at least CLEAR_GAP characters);
- every correct option of a select-all question is longer than every wrong one;
- one length rank (longest, second longest, …) holds the key of more single-answer questions
  than chance + 10 points, in a bank or over all of them (`quizprep.bank.length_ranks`);
- a chained question's predecessor (its prompt, options or explanation) states the follower's
  answer, so whoever just read it can copy it;
- a surface feature of the options tells the right ones from the wrong ones: their final
  punctuation, or the words they open with (`quizprep.bank.surface_cues`).

`form_cues` also yields the warnings of `quizprep.bank.answer_units`: a numeric prompt that does not
name the unit a bare number is read in. That is no giveaway but a trap; it is reported here because
these are the warnings `quizprep check` collects for each question.

Tolerances that accept a slip are the other kind of giveaway; `quizprep.bank.audit` finds those."""
from __future__ import annotations

import re
from typing import Iterable, Iterator

from quizprep.bank.answer_units import answer_unit_warnings
from quizprep.bank.audit import Env
from quizprep.bank.formula import format_number
from quizprep.bank.length_ranks import length_rank_cues
from quizprep.bank.model import BankError, ChoiceQuestion, NumericQuestion, Question
from quizprep.bank.surface_cues import opening_rank_cues, surface_cues
from quizprep.bank.units import scale_of

# The correct option may be the longest; it is a cue once it is a quarter longer than the next
# and at least a few words longer (42.1875 against 43.75 gives nothing away).
CLEAR_MARGIN = 1.25
CLEAR_GAP = 10
SMALL_COUNT = 10
# A stated number that matches a follower's answer in one draw of thousands is a coincidence;
# matching one draw in twenty (or the only draw) hands the answer to a good share of showings.
GIVEAWAY_SHARE = 0.05
# Stated numbers × follower draws the check compares in all, so that a hostile bank (a huge
# explanation chained to many followers) costs it about as much as validation, a few seconds.
COMPARISON_BUDGET = 20_000_000
# A number as prose writes it: 16, 1,024, 11.09, 4.2e22 (a leading sign is part of the text).
_NUMBER = re.compile(r"((?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\w)|(?<![\w.])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)"
                     r"\s?([A-Za-z]*)")
_SPACE = re.compile(r"\s+")


def form_cues(questions: Iterable[Question], evaluated: dict[str, list[Env]]) -> Iterator[BankError]:
    """Every form cue in `questions`, in bank order; `evaluated` holds the numeric questions'
    audited draws (`quizprep.bank.audit.audited_draws`)."""
    questions = list(questions)
    by_id = {question.id: question for question in questions}
    budget = [COMPARISON_BUDGET]
    for question in questions:
        if isinstance(question, ChoiceQuestion):
            yield from _length_cues(question)
            yield from surface_cues(question)
        yield from answer_unit_warnings([question])
        for follower_id in dict.fromkeys(question.chain):
            follower = by_id.get(follower_id)
            if follower is not None:
                yield from _predecessor_gives_answer(question, follower, evaluated.get(follower_id, []), budget)
    yield from length_rank_cues(questions)
    yield from opening_rank_cues(questions)


def _warning(question: Question, message: str) -> BankError:
    return BankError(question.source.file, question.source.line, question.id, message)


def _length_cues(question: ChoiceQuestion) -> Iterator[BankError]:
    right = sorted(len(choice.text) for choice in question.choices if choice.correct)
    wrong = sorted(len(choice.text) for choice in question.choices if not choice.correct)
    if not wrong:
        return
    if not question.multiple and right[0] > max(CLEAR_MARGIN * wrong[-1], wrong[-1] + CLEAR_GAP):
        yield _warning(question, f"the correct option is the longest by a clear margin ({right[0]} characters, "
                                 f"the longest wrong one {wrong[-1]}): give every option the same level of "
                                 f"detail and move the justification to 'why'")
    elif question.multiple and right[0] > wrong[-1]:
        yield _warning(question, f"every correct option is longer than every wrong one (shortest correct "
                                 f"{right[0]} characters, longest wrong {wrong[-1]}): give every option the "
                                 f"same level of detail and move the justification to 'why'")


def predecessor_text(question: Question) -> str:
    """What someone has read once they have answered `question`, whitespace folded."""
    parts = [question.prompt, question.explanation]
    if isinstance(question, ChoiceQuestion):
        parts += [part for choice in question.choices for part in (choice.text, choice.why)]
    return _SPACE.sub(" ", " ".join(parts))


def stated_numbers(text: str) -> list[tuple[float, str]]:
    """The numbers `text` writes out, separators removed, each with the word that follows it
    (its unit, when it has one)."""
    return [(float(match.group(1).replace(",", "")), match.group(2)) for match in _NUMBER.finditer(text)]


def _predecessor_gives_answer(predecessor: Question, follower: Question, evaluated: list[Env],
                              budget: list[int]) -> Iterator[BankError]:
    text = predecessor_text(predecessor)
    if isinstance(follower, ChoiceQuestion):
        for choice in follower.choices:
            folded = _SPACE.sub(" ", choice.text).lower()
            if choice.correct and len(folded.split()) >= 3 and folded in text.lower():
                yield _warning(follower, f"its predecessor [{predecessor.id}] states the correct option "
                                         f"{choice.text!r}")
                return
    elif isinstance(follower, NumericQuestion):
        # A numeric predecessor's own parameters are its inputs, not results it gives away.
        inputs = _parameter_values(predecessor)
        readings = _readings(follower, [(n, u) for n, u in stated_numbers(text) if n not in inputs], evaluated)
        budget[0] -= len(readings) * len(evaluated)
        if budget[0] < 0:
            yield _warning(follower, f"not compared with its predecessor [{predecessor.id}]: the banks state more "
                                     f"numbers than the check compares ({COMPARISON_BUDGET:,} number × draw pairs)")
            return
        stated = _number_matching_answer(follower, readings, evaluated)
        if stated is not None:
            yield _warning(follower, f"its predecessor [{predecessor.id}] states {format_number(stated)}, which is "
                                     f"within the tolerance {follower.tolerance} of this question's answer in at least "
                                     f"{GIVEAWAY_SHARE:.0%} of its draws")


def _readings(question: NumericQuestion, stated: list[tuple[float, str]],
              evaluated: list[Env]) -> list[tuple[float, float]]:
    """Each telling stated number with the value it means for `question`: itself, or scaled to
    the question's base unit when the text writes the unit the question is shown in. Small
    whole numbers (prose counts with them: "2 heads", "4 bytes") and the question's own inputs
    (its parameters' values and the numbers its prompt writes) give nothing away."""
    inputs = _parameter_values(question) | {number for number, _ in stated_numbers(question.prompt)}
    telling = {(n, suffix) for n, suffix in stated if not (n.is_integer() and n <= SMALL_COUNT) and n not in inputs}
    if all(float(env["answer"]).is_integer() for env in evaluated):
        telling = {(n, suffix) for n, suffix in telling if n.is_integer()}  # nobody types 16.1 for a count of 16
    display = question.display_unit
    scale = scale_of(display, question.unit) if display else 1.0
    return sorted({(n, n * scale if display and suffix == display else n) for n, suffix in telling})


def _number_matching_answer(question: NumericQuestion, readings: list[tuple[float, float]],
                            evaluated: list[Env]) -> float | None:
    """A stated number the question would accept as its answer in at least GIVEAWAY_SHARE of its
    audited draws."""
    for number, value in readings:
        matches = sum(question.tolerance.accepts(value, float(env["answer"])) for env in evaluated)
        if matches and matches >= GIVEAWAY_SHARE * len(evaluated):
            return number
    return None


def _parameter_values(question: Question) -> set[float]:
    return {float(v) for p in question.params for v in p.values} if isinstance(question, NumericQuestion) else set()
