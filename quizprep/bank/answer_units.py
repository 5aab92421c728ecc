"""The unit a numeric question's bare number is read in, against the unit its prompt asks for.

A bare number is read in the question's `display_unit` (with `display_unit: GFLOP`, "12" is 12
GFLOP), so the prompt must say so ("Answer in GFLOP."): otherwise a learner who types the number
in the base unit, or in whatever prefix seemed natural, is marked wrong and told "a bare number is
read in GFLOP, as the question asks" by a question that never asked. The other way round, a prompt
that asks "Answer in GiB" on a question without that display unit reads the bare "32" as 32 bytes.
Both are warnings of `quizprep check` (errors with `--strict`), reported at the question."""
from __future__ import annotations

import re
from typing import Iterable, Iterator

from quizprep.bank.model import BankError, NumericQuestion, Question
from quizprep.bank.units import UnitError, scale_of

# "Answer in GiB", "Give the size in GB", "Express it in ms": the unit a prompt asks for.
_ASKED_IN = re.compile(r"\b(?:answer|give|express)\b[^.?!]*?\bin\s+([A-Za-z%µμ]+)(?![\w/])", re.IGNORECASE)
_PERCENT = ("percent", "percentage", "%")


def answer_unit_warnings(questions: Iterable[Question]) -> Iterator[BankError]:
    """A warning for each numeric question whose prompt does not name the unit a bare number is
    read in, or asks for the answer in another unit."""
    for question in questions:
        if isinstance(question, NumericQuestion):
            message = unit_mismatch(question)
            if message:
                yield BankError(question.source.file, question.source.line, question.id, message)


def bare_number_unit(question: NumericQuestion) -> str | None:
    """The unit a bare number is read in when it is not the question's base unit, else None."""
    shown = question.display_unit
    return shown if shown and shown != question.unit else None


def names_unit(prompt: str, unit: str) -> bool:
    """Whether `prompt` says "in <unit>" ("Answer in GFLOP.", "the size in GB"); for a question
    asked in percent, "in percent" or "in %". A rate ("in TFLOP/s") does not count."""
    spellings = _PERCENT if unit == "%" else (unit,)
    folded = " ".join(prompt.split())
    return any(re.search(rf"\bin\s+{re.escape(spelling)}(?![\w/])", folded) for spelling in spellings)


def unit_mismatch(question: NumericQuestion) -> str | None:
    """Why the prompt and the reading of a bare number disagree, or None when they agree."""
    bare = bare_number_unit(question)
    if bare and not names_unit(question.prompt, bare):
        return (f"a bare number is read in {bare} (display_unit), but the prompt never says so: "
                f"add \"Answer in {'percent' if bare == '%' else bare}.\" to the prompt")
    for match in _ASKED_IN.finditer(" ".join(question.prompt.split())):
        asked = match.group(1)
        scale = _scale(asked, question)
        if scale is not None and scale != _scale(bare or question.unit, question):
            read_in = bare or (question.unit or "plain numbers")
            return (f"the prompt asks for the answer in {asked}, but a bare number is read in {read_in}: "
                    f"set display_unit: {asked}, or ask in {read_in}")
    return None


def _scale(unit: str, question: NumericQuestion) -> float | None:
    """Base units per `unit`, or None when `unit` is no unit of the question's quantity."""
    if unit.lower() in _PERCENT:
        unit = "%"
    if unit == "%":
        return 0.01 if question.unit == "" else None
    try:
        return scale_of(unit, question.unit)
    except UnitError:
        return None
