"""FSRS scheduling: how an answer becomes a rating, and a rating a card's next due date.

One FSRS card per question id.

Choice and numeric questions:
  wrong → Again; right → Good; right but slow → Hard.
  "Slow" means taking longer than `slow_after(kind, difficulty)` seconds: a learner who knows
  the answer reads and answers a difficulty-1 choice question in well under 30 s; a numeric
  question needs arithmetic, so it gets twice as long; each difficulty step adds half the base.

Free response (self-assessed against the weighted rubric, score = met weight / total weight):
  score < 0.5 → Again; 0.5 ≤ score < 0.75 → Hard; 0.75 ≤ score < 0.95 → Good; score ≥ 0.95 → Easy.
  Half the rubric weight is the pass mark, as an interviewer would judge it; Easy needs the
  whole rubric (allowing for rounding), since missing any criterion is worth seeing again soon.

Learning: a question answered wrong (Again) comes back after one 10-minute learning step; any
pass of a question still in learning (Hard, Good or Easy) graduates it to FSRS's day-scale
intervals. fsrs's default steps (1 min, 10 min) kept a right first answer due 10 minutes later
(5½ for a slow one, rated Hard), so one sitting of right answers filled the review queue (issue 13).
With one step, fsrs would still keep a Hard pass in learning (15 minutes), hence `_graduating`.
"""
from __future__ import annotations

import zlib
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Iterable, Iterator

if TYPE_CHECKING:
    from fsrs import Card, Rating, Scheduler

    from quizprep.study.rows import Schedule

BASE_SLOW_S = {"choice": 30.0, "numeric": 60.0}
FREE_THRESHOLDS = ((0.95, "Easy"), (0.75, "Good"), (0.5, "Hard"))
PASS_SCORE = 0.5
LEARNING_STEP = timedelta(minutes=10)


def slow_after(kind: str, difficulty: int) -> float:
    """Seconds after which a right answer counts as Hard: 30/45/60 s (choice), 60/90/120 s (numeric)."""
    base = BASE_SLOW_S[kind]
    return base * (1 + 0.5 * (difficulty - 1))


def rating_for_answer(kind: str, difficulty: int, correct: bool, elapsed_s: float) -> Rating:
    from fsrs import Rating

    if not correct:
        return Rating.Again
    return Rating.Hard if elapsed_s > slow_after(kind, difficulty) else Rating.Good


def rating_for_score(score: float) -> Rating:
    """The rating of a rubric score fraction in [0, 1] (thresholds in the module docstring)."""
    from fsrs import Rating

    if not 0.0 <= score <= 1.0:
        raise ValueError(f"a rubric score is a fraction in [0, 1], got {score}")
    for threshold, name in FREE_THRESHOLDS:
        if score >= threshold:
            return Rating[name]
    return Rating.Again


def make_scheduler(*, fuzzing: bool = True) -> Scheduler:
    """FSRS with its default parameters (90 % desired retention) and one learning step; tests
    turn fuzzing off."""
    from fsrs import Scheduler

    return Scheduler(learning_steps=(LEARNING_STEP,), enable_fuzzing=fuzzing)


def _graduating(scheduler: Scheduler) -> Scheduler:
    """The same scheduler without learning steps: fsrs then moves a learning card it reviews
    straight to day-scale intervals, whatever the rating."""
    from fsrs import Scheduler

    return Scheduler.from_dict({**scheduler.to_dict(), "learning_steps": []})


def card_id(question_id: str) -> int:
    """A stable integer id for the card of a question (FSRS wants ints; quizprep never
    looks a card up by it). A checksum rather than hashlib's digests, which load OpenSSL."""
    return zlib.crc32(question_id.encode())


def review(scheduler: Scheduler, card: Card | None, question_id: str, rating: Rating,
           now: datetime) -> Card:
    """The card after a review at `now` (a new card when the question was never answered)."""
    from datetime import timezone

    from fsrs import Card, Rating, State

    now = now.astimezone(timezone.utc)
    if card is None:
        card = Card(card_id=card_id(question_id), due=now)
    if card.state == State.Learning and rating != Rating.Again:
        scheduler = _graduating(scheduler)  # with steps, a Hard pass would stay in learning
    reviewed, _log = scheduler.review_card(card, rating, now)
    return reviewed


def due_now_after_lapse(card: Card, rating: Rating, graded_at: datetime) -> Card:
    """A lapse (Again) found in graded code leaves the question due at once, not after FSRS's
    first learning step: the code just showed the point is not known."""
    from fsrs import Rating

    if rating == Rating.Again and card.due > graded_at:
        card.due = graded_at
    return card


def replay(scheduler: Scheduler, question_id: str, events: Iterable[tuple[datetime, Rating, bool]]) -> Iterator[Card]:
    """The question's card after each of `events` (when, rating, from an exercise grade), in order."""
    card = None
    for when, rating, graded in events:
        card = review(scheduler, card, question_id, rating, when)
        card = due_now_after_lapse(card, rating, when) if graded else card
        yield card


def retrievability(scheduler: Scheduler, card: Card | None, at: datetime) -> float:
    """FSRS's predicted probability of recalling the card at `at` (0 for a question never answered)."""
    from datetime import timezone

    if card is None:
        return 0.0
    return float(scheduler.get_card_retrievability(card, at.astimezone(timezone.utc)))


def scheduled_recall(scheduler: Scheduler, schedule: Schedule | None, at: datetime) -> float:
    """`retrievability` from a card's `Schedule`, without its whole card: FSRS reads only the
    stability and the last review, so a card holding those two stands in for it."""
    from fsrs import Card

    if schedule is None:
        return 0.0
    return retrievability(scheduler, Card(card_id=0, stability=schedule.stability, due=schedule.due,
                                          last_review=schedule.last_review), at)
