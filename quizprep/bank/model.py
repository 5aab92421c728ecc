"""The question model: what a bank file describes once it has been validated."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from quizprep.bank.errors import BankError as BankError  # where the loaders and checks import it from
from quizprep.bank.formula import Formula

Kind = Literal["choice", "numeric", "free"]


class Source(NamedTuple):
    """Where something was written, for error messages and reports."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


# Only the fields the three kinds of question share: never built itself, so it needs none of the
# methods a dataclass generates (each compiled at import, on every start), only frozen's.
@dataclass(frozen=True, init=False, repr=False, eq=False)
class QuestionBase:
    id: str
    topic: str
    difficulty: int
    tags: tuple[str, ...]
    prompt: str
    explanation: str
    references: tuple[str, ...]
    pitfalls: tuple[str, ...]
    follow_ups: tuple[str, ...]
    chain: tuple[str, ...]
    source: Source = field(compare=False)
    # Ids of questions merged into this one: progress recorded under them belongs to this one.
    aliases: tuple[str, ...] = field(default=(), compare=False)


class Choice(NamedTuple):
    text: str
    correct: bool
    why: str


@dataclass(frozen=True)
class ChoiceQuestion(QuestionBase):
    choices: tuple[Choice, ...] = ()
    shuffle: bool = True  # False keeps the written order, for choices that refer to each other by place
    kind: Literal["choice"] = "choice"

    @property
    def correct_indices(self) -> frozenset[int]:
        return frozenset(i for i, choice in enumerate(self.choices) if choice.correct)

    @property
    def multiple(self) -> bool:
        return len(self.correct_indices) > 1


class ParamSpec(NamedTuple):
    """A parameter: fixed, one of a list, or a stepped range (both ends inclusive)."""

    name: str
    values: tuple[float | int, ...]

    @property
    def generated(self) -> bool:
        return len(self.values) > 1


class WrongAnswer(NamedTuple):
    formula: Formula
    message: str


class Tolerance(NamedTuple):
    relative: float = 0.0
    absolute: float = 0.0

    def accepts(self, given: float, expected: float) -> bool:
        return abs(given - expected) <= max(self.absolute, self.relative * abs(expected))

    def __str__(self) -> str:
        if self.absolute:
            return f"±{self.absolute:g}"
        return f"±{self.relative * 100:g}%"


@dataclass(frozen=True)
class NumericQuestion(QuestionBase):
    params: tuple[ParamSpec, ...] = ()
    derived: tuple[tuple[str, Formula], ...] = ()
    answer: Formula | None = None
    unit: str = ""
    display_unit: str | None = None
    tolerance: Tolerance = Tolerance()
    wrong_answers: tuple[WrongAnswer, ...] = ()
    kind: Literal["numeric"] = "numeric"

    @property
    def generated(self) -> bool:
        return any(p.generated for p in self.params)


class RubricItem(NamedTuple):
    criterion: str
    weight: float


@dataclass(frozen=True)
class FreeQuestion(QuestionBase):
    model_answer: str = ""
    rubric: tuple[RubricItem, ...] = ()
    kind: Literal["free"] = "free"

    @property
    def total_weight(self) -> float:
        return sum(item.weight for item in self.rubric)


Question = ChoiceQuestion | NumericQuestion | FreeQuestion


class Bank(NamedTuple):
    topic: str
    title: str
    path: str
    questions: tuple[Question, ...]
