"""Progress statistics for the stats screen, `quizprep stats` and reports.

Definitions (shown to learners in reports, so keep them in sync with `DEFINITIONS`):
- accuracy: the mean score of all assessed answers in a topic (choice and numeric score 1 or 0;
  free responses score their rubric fraction).
- mastery: the mean, over every question of the topic, of FSRS's predicted probability of
  recalling it one week from now; a question never answered, or whose latest answer was wrong,
  counts 0. A week ahead rather than now, because FSRS rates anything just reviewed as fresh in
  memory: only a card with real stability keeps a high value over a week.
- streak: consecutive local days with at least one answer, ending today (or yesterday, when
  nothing has been answered yet today).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from quizprep.study.overview import TopicStats, mean, topic_overview
from quizprep.study.store import Answer, Store

if TYPE_CHECKING:
    from quizprep.bank.loader import LoadResult
    from quizprep.bank.model import Question
    from quizprep.study.grades import ExerciseStatus

HISTORY_DAYS = 30
AHEAD_DAYS = 7
DEFINITIONS = {
    "accuracy": "mean score of all assessed answers (choice/numeric 1 or 0, free response the rubric fraction)",
    "mastery": "mean over the topic's questions of FSRS's predicted chance of recalling each one week "
               "from now (0 for questions never answered or answered wrong last time)",
    "streak": "consecutive days with at least one answer, up to today",
}


@dataclass(frozen=True)
class MissedCriterion:
    question_id: str
    criterion: str
    missed: int
    assessed: int


@dataclass(frozen=True)
class DayCount:
    day: date
    answers: int
    correct: int


@dataclass(frozen=True)
class Stats:
    generated_at: datetime
    topics: tuple[TopicStats, ...]
    missed_criteria: tuple[MissedCriterion, ...]
    streak_days: int
    history: tuple[DayCount, ...]
    due_ahead: tuple[tuple[date, int], ...]
    total_answers: int
    accuracy: float | None
    exercises: tuple[ExerciseStatus, ...] = ()  # the latest grade of each exercise graded

    @property
    def due_now(self) -> int:
        """The questions due now, as Home counts them: today's count in `due_ahead` also has
        those that come due later today (a question missed just now, a review due tonight)."""
        return sum(topic.due for topic in self.topics)


def compute_stats(store: Store, questions: Sequence[Question], *, now: datetime | None = None,
                  tz: tzinfo | None = None, titles: Mapping[str, str] | None = None,
                  history_days: int = HISTORY_DAYS, ahead_days: int = AHEAD_DAYS) -> Stats:
    """Everything the stats screen shows. Days are local days in `tz` (default: the system's)."""
    from quizprep.study.grades import exercise_statuses

    now = now or datetime.now(timezone.utc)
    answers = store.answers()
    today = _local_day(now, tz)
    scores = [a.score for a in answers if a.score is not None]  # the assessed answers
    return Stats(
        generated_at=now,
        topics=tuple(topic_overview(store, questions, now=now, titles=titles)),
        missed_criteria=tuple(missed_criteria(store, answers)),
        streak_days=streak([_local_day(a.answered_at, tz) for a in answers], today),
        history=tuple(history(answers, today, history_days, tz)),
        due_ahead=tuple(due_ahead(store, questions, now, ahead_days, tz)),
        total_answers=len(answers),
        accuracy=mean(scores),
        exercises=tuple(exercise_statuses(store)),
    )


def bank_warnings(result: LoadResult) -> list[str]:
    """One line per bank problem ("file:line: [id] message"); those questions were skipped."""
    return [str(error) for error in result.errors]


def missed_criteria(store: Store, answers: Sequence[Answer] | None = None) -> list[MissedCriterion]:
    """Rubric criteria by how often the learner marked them missed, most missed first."""
    question_of = {a.id: a.question_id for a in (answers if answers is not None else store.answers())}
    missed: Counter[tuple[str, str]] = Counter()
    assessed: Counter[tuple[str, str]] = Counter()
    for mark in store.rubric_marks():
        key = (question_of.get(mark.answer_id, "?"), mark.criterion)
        assessed[key] += 1
        missed[key] += not mark.met
    ranked = sorted((key for key in assessed if missed[key]),
                    key=lambda key: (-missed[key], -missed[key] / assessed[key], key))
    return [MissedCriterion(qid, criterion, missed[(qid, criterion)], assessed[(qid, criterion)])
            for qid, criterion in ranked]


def streak(days: Iterable[date], today: date) -> int:
    active = set(days)
    day = today if today in active else today - timedelta(days=1)
    count = 0
    while day in active:
        count += 1
        day -= timedelta(days=1)
    return count


def history(answers: Iterable[Answer], today: date, days: int, tz: tzinfo | None = None) -> list[DayCount]:
    """Answers and right answers per day for the last `days` days, oldest first, empty days included."""
    total: Counter[date] = Counter()
    right: Counter[date] = Counter()
    for answer in answers:
        day = _local_day(answer.answered_at, tz)
        total[day] += 1
        right[day] += bool(answer.correct)
    first = today - timedelta(days=days - 1)
    return [DayCount(first + timedelta(days=i), total[first + timedelta(days=i)], right[first + timedelta(days=i)])
            for i in range(days)]


def due_ahead(store: Store, questions: Iterable[Question], now: datetime, days: int = AHEAD_DAYS,
              tz: tzinfo | None = None) -> list[tuple[date, int]]:
    """Cards coming due on each of the next `days` days, today first (overdue cards count today)."""
    cards = store.cards()
    today = _local_day(now, tz)
    counts: Counter[int] = Counter()
    for question in questions:
        card = cards.get(question.id)
        if card is not None:
            counts[max(0, (_local_day(card.due, tz) - today).days)] += 1
    return [(today + timedelta(days=i), counts[i]) for i in range(days)]


def _local_day(moment: datetime, tz: tzinfo | None) -> date:
    return moment.astimezone(tz).date()
