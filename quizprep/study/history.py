"""A question's history: every answer with what FSRS made of it, and why it is due now.

`due_after` is replayed from the answers and exercise grades with the store's FSRS parameters
but without fuzzing (the small random spread FSRS adds to intervals is not recorded), so an
earlier entry's date can differ from the one shown then by that spread; the latest rated
entry shows the card's actual due date.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from typing import TYPE_CHECKING

from quizprep.bank.model import NumericQuestion, Question
from quizprep.study.clock import zone_text
from quizprep.study.store import Store

if TYPE_CHECKING:
    from quizprep.bank.numeric import Draw


@dataclass(frozen=True)
class HistoryEntry:
    answered_at: datetime
    mode: str
    response: str
    correct: bool | None  # None: a free response still awaiting its rubric self-assessment
    score: float | None
    rating_name: str | None  # None when the answer moved no card (cram mode, or not yet assessed)
    due_after: datetime | None  # when the question was next due after this answer
    seed: int | None = None  # a numeric answer's draw: the numbers it was given


def card_history(store: Store, question_id: str) -> list[HistoryEntry]:
    """The question's answers, oldest first, each with the rating and next due date it led to."""
    from fsrs import Rating, Scheduler

    from quizprep.study.scheduling import replay

    plain = Scheduler.from_dict({**store.scheduler.to_dict(), "enable_fuzzing": False})
    answers = store.answers(question_id=question_id)
    # (when, index of the answer or None for an exercise grade, rating), as the store replays them
    events: list[tuple[datetime, int | None, Rating]] = [
        (a.assessed_at or a.answered_at, i, Rating(a.rating)) for i, a in enumerate(answers) if a.rating is not None]
    events += [(g.graded_at, None, Rating.Good if g.passed else Rating.Again) for g in store.grades()
               if question_id in g.lessons]
    events.sort(key=lambda event: event[0])  # stable: answers keep their order
    cards = replay(plain, question_id, [(when, rating, index is None) for when, index, rating in events])
    due_after = {index: card.due for (_, index, _), card in zip(events, cards) if index is not None}
    actual = store.card(question_id)
    if events and events[-1][1] is not None and actual is not None:
        due_after[events[-1][1]] = actual.due
    return [HistoryEntry(a.answered_at, a.mode, a.response, a.correct, a.score,
                         None if a.rating is None else Rating(a.rating).name, due_after.get(i), a.seed)
            for i, a in enumerate(answers)]


def numbers_of(question: Question, seed: int | None) -> Draw | None:
    """The numbers a numeric question was asked with under `seed`; None when there are none (not
    numeric, no seed, or the bank changed so that this seed no longer evaluates)."""
    from quizprep.bank.formula import FormulaError
    from quizprep.bank.numeric import draw

    if not isinstance(question, NumericQuestion) or seed is None:
        return None
    try:
        return draw(question, seed)
    except FormulaError:
        return None


def prompt_summary(question: Question, numbers: Draw | None = None) -> str:
    """The prompt's first paragraph, whole (a sentence wrapped over lines is not cut), as
    Markdown: with the drawn numbers; when none were drawn, with the values that never change
    and the name of each drawn one in italics (a template's `{{name}}` reads as code, not prose)."""
    from quizprep.bank.numeric import fill_placeholders, fill_template

    paragraph = " ".join(next((p for p in question.prompt.split("\n\n") if p.strip()), "").split())
    if numbers is not None:
        return fill_placeholders(paragraph, numbers)
    return fill_template(paragraph, question) if isinstance(question, NumericQuestion) else paragraph


def why_due(store: Store, question: Question, now: datetime) -> str:
    """One sentence on why the question is (or is not) due at `now`, its times in `now`'s zone."""
    from quizprep.study.grades import due_reasons
    from quizprep.study.scheduling import retrievability

    reason = due_reasons(store).get(question.id)
    card = store.card(question.id)
    if reason:
        return f"Due because {reason}."
    if card is None and store.answers(question_id=question.id):
        return "Answered only in cram mode, which leaves the review schedule alone: it is not due."
    if card is None:
        return "Never answered: a new question is not due; practice asks it after the due ones."
    if card.due > now:
        return f"Not due until {_when(card.due, now)}."
    rated = [a for a in store.answers(question_id=question.id) if a.rating is not None]
    if rated and not rated[-1].correct:
        return (f"You answered it wrong on {_when(rated[-1].answered_at, now)}, so it came back after a short "
                f"learning step (due since {_when(card.due, now)}).")
    recall = retrievability(store.scheduler, card, now)
    target = store.scheduler.desired_retention
    return (f"FSRS predicts your recall of it is now {recall:.0%} and schedules a review when recall falls "
            f"to {target:.0%}: due since {_when(card.due, now)}.")


def _when(moment: datetime, now: datetime) -> str:
    """`moment` in the zone of `now`, which is the learner's."""
    return f"{moment.astimezone(now.tzinfo):%Y-%m-%d %H:%M} {zone_text(now)}"
