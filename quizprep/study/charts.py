"""What the progress pictures draw, as data: the reviews due each day ahead (Anki's forecast),
the share of reviews recalled each week (its retention), and FSRS's predicted recall per topic on
the interview day. The app, `quizprep stats` and `report --html` each draw these the same way.

A review is an answer to a question answered before; it counts as recalled when it was right (a
free response: when its rubric score is at least half). Free responses not yet assessed wait.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import Iterable, Mapping, Sequence

from quizprep.bank.model import Question
from quizprep.study.interview import Forecast
from quizprep.study.report_sections import interview_forecast
from quizprep.study.rows import Answer
from quizprep.study.stats import due_ahead
from quizprep.study.store import Store

FORECAST_DAYS = 30
MOST_FORECAST_DAYS = 120  # an interview months away: the picture would be too fine to read
RETENTION_WEEKS = 8
RECALLED_SCORE = 0.5


@dataclass(frozen=True)
class WeekRetention:
    week: date  # its Monday
    reviews: int
    recalled: int

    @property
    def rate(self) -> float | None:
        return self.recalled / self.reviews if self.reviews else None


@dataclass(frozen=True)
class ProgressCharts:
    due: tuple[tuple[date, int], ...]  # today first; overdue cards count today
    retention: tuple[WeekRetention, ...]  # oldest week first, this week last
    forecast: Forecast | None  # None: no interview date is set

    @property
    def due_title(self) -> str:
        first, last = self.due[0][0], self.due[-1][0]
        until = "the interview" if self.forecast is not None else f"{len(self.due)} days"
        return f"Reviews due each day until {until} ({first:%b %d} to {last:%b %d})"

    @property
    def retention_title(self) -> str:
        return f"Reviews recalled each week, last {len(self.retention)} weeks (%)"

    @property
    def recall_title(self) -> str:
        assert self.forecast is not None
        return f"Predicted recall per topic on the interview day, {self.forecast.on:%a %b %d}"


def progress_charts(store: Store, questions: Sequence[Question], now: datetime, tz: tzinfo | None = None,
                    titles: Mapping[str, str] | None = None) -> ProgressCharts:
    """The three pictures' data at `now`; days are local days in `tz` (default: the system's)."""
    forecast = interview_forecast(store, questions, now, tz, titles or {})
    days = FORECAST_DAYS if forecast is None else min(max(forecast.days_left + 1, 1), MOST_FORECAST_DAYS)
    today = now.astimezone(tz).date()
    return ProgressCharts(due=tuple(due_ahead(store, questions, now, days, tz)),
                          retention=tuple(weekly_retention(store.answers(), today, RETENTION_WEEKS, tz)),
                          forecast=forecast)


def weekly_retention(answers: Iterable[Answer], today: date, weeks: int,
                     tz: tzinfo | None = None) -> list[WeekRetention]:
    """Reviews and recalled reviews in each of the last `weeks` weeks (Monday to Sunday)."""
    this_monday = today - timedelta(days=today.weekday())
    first = this_monday - timedelta(weeks=weeks - 1)
    reviews = [0] * weeks
    recalled = [0] * weeks
    seen: set[str] = set()
    for answer in sorted(answers, key=lambda a: a.answered_at):
        earlier = answer.question_id in seen
        seen.add(answer.question_id)
        outcome = _recalled(answer)
        index = (answer.answered_at.astimezone(tz).date() - first).days // 7
        if earlier and outcome is not None and 0 <= index < weeks:
            reviews[index] += 1
            recalled[index] += outcome
    return [WeekRetention(first + timedelta(weeks=i), reviews[i], recalled[i]) for i in range(weeks)]


def _recalled(answer: Answer) -> bool | None:
    if answer.score is not None:
        return answer.score >= RECALLED_SCORE
    return answer.correct
