"""What a study session shows and gives back: a showing of a question, the feedback on an
answer, a free response awaiting its rubric, and the end-of-session report. Plain values."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, TypedDict

from quizprep.bank.model import FreeQuestion, Question, RubricItem

if TYPE_CHECKING:
    from fsrs import Rating

    from quizprep.bank.numeric import Draw, NumericVerdict


class InputError(ValueError):
    """An answer that cannot be judged (e.g. not a number in the question's unit); nothing was
    recorded, so the learner can correct it."""


@dataclass(frozen=True)
class Showing:
    """One question as shown to the learner, with this showing's numbers for numeric questions."""

    question: Question
    number: int
    shown_at: datetime
    draw: Draw | None = None
    follow_up_of: str | None = None
    # A choice question's display order: position k shows choice choice_order[k]. Answers
    # and records always use the original indices.
    choice_order: tuple[int, ...] = ()
    again: bool = False  # a miss asked once more at the end of the session
    # What an answer taken back (undone) had, shown again to hand in or change: the choices
    # picked; a free answer's rubric ticks.
    picked: frozenset[int] = frozenset()
    ticked: tuple[bool, ...] = ()

    @property
    def prompt(self) -> str:
        return self._filled(self.question.prompt)

    @property
    def explanation(self) -> str:
        return self._filled(self.question.explanation)

    def _filled(self, text: str) -> str:
        if self.draw is None:
            return text
        from quizprep.bank.numeric import fill_placeholders

        return fill_placeholders(text, self.draw)


@dataclass(frozen=True)
class Tally:
    """Where a session stands, counted as Anki counts new and relearning cards apart: its
    questions asked for the first time (`place` of `planned`, which a miss does not grow), and
    its misses asked once more at the end (`again_place` of `again_planned`)."""

    place: int
    planned: int
    again_place: int
    again_planned: int


@dataclass(frozen=True)
class Feedback:
    """The judged, committed answer to a showing."""

    showing: Showing
    answer_id: int
    response: str
    correct: bool
    score: float
    rating: Rating
    elapsed_s: float
    slow: bool
    next_due: datetime
    picked: frozenset[int] = frozenset()
    verdict: NumericVerdict | None = None
    worked: tuple[str, ...] = ()
    rubric_met: tuple[bool, ...] = ()
    skipped: bool = False  # "I don't know": recorded as a wrong answer

    @property
    def question(self) -> Question:
        return self.showing.question

    @property
    def explanation(self) -> str:
        return self.showing.explanation

    @property
    def missed(self) -> tuple[RubricItem, ...]:
        rubric = self.question.rubric if isinstance(self.question, FreeQuestion) else ()
        return tuple(item for item, met in zip(rubric, self.rubric_met) if not met)


class FeedbackDetails(TypedDict, total=False):
    """What a Feedback says beyond the verdict, depending on the question's kind."""

    picked: frozenset[int]
    verdict: NumericVerdict | None
    worked: tuple[str, ...]
    rubric_met: tuple[bool, ...]
    skipped: bool


@dataclass(frozen=True)
class PendingAssessment:
    """A committed free response awaiting the learner's rubric self-assessment."""

    showing: Showing
    answer_id: int
    response: str
    elapsed_s: float

    @property
    def question(self) -> FreeQuestion:
        assert isinstance(self.showing.question, FreeQuestion)
        return self.showing.question


@dataclass(frozen=True)
class TopicScore:
    topic: str
    answered: int
    score: float
    possible: int

    @property
    def fraction(self) -> float:
        return self.score / self.possible if self.possible else 0.0


@dataclass(frozen=True)
class SessionReport:
    """The end of a session: per-topic scores and the rubric items missed (question id, criterion)."""

    mode: str
    started_at: datetime
    ended_at: datetime
    feedback: tuple[Feedback, ...]
    unanswered: tuple[str, ...]
    topics: tuple[TopicScore, ...]
    missed: tuple[tuple[str, str], ...]
    out_of_time: bool
    # The numbers of the numeric questions shown and not answered, by id: the report names
    # them with what the learner saw, not with their placeholders.
    draws: dict[str, Draw] = field(default_factory=dict)
    # A mock round's questions, answered or not (None for other sessions): as in an interview,
    # one left unanswered when the round ended early or ran out of time counts as missed.
    round_size: int | None = None

    @property
    def score(self) -> float:
        """The mean score of the answers given."""
        possible = sum(t.possible for t in self.topics)
        return sum(t.score for t in self.topics) / possible if possible else 0.0

    @property
    def round_score(self) -> float:
        """A mock round's score over all its questions, those not answered scoring 0; for
        other sessions, and a round answered in full, `score`."""
        possible = max(self.round_size or 0, sum(t.possible for t in self.topics))
        return sum(t.score for t in self.topics) / possible if possible else 0.0
