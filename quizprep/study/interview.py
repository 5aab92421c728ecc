"""Preparing for a date: FSRS's predicted recall of each topic on the interview day.

The prediction is FSRS's retrievability of each answered question's card at INTERVIEW_HOUR on
that date (in the timezone of `now`), averaged per topic over all its questions: a question never
answered counts 0, as nothing says it would be recalled. An exercise grade reviews a question's
card but does not make it "seen": only an answer does (issue 21: one passing grade showed 71 %).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Iterable, Mapping

from quizprep.bank.model import Question
from quizprep.study.store import Store

INTERVIEW_HOUR = 9
SETTING = "interview"


@dataclass(frozen=True)
class TopicForecast:
    topic: str
    title: str
    recall: float | None  # mean predicted recall over every question (0 if never answered); None: none answered
    seen: int  # questions answered at least once
    total: int


@dataclass(frozen=True)
class Forecast:
    on: date
    days_left: int
    topics: tuple[TopicForecast, ...]  # lowest predicted recall first, topics never answered before all


def interview_moment(on: date, now: datetime) -> datetime:
    """The moment the forecast is made for: INTERVIEW_HOUR on the interview date, in now's zone."""
    return datetime.combine(on, time(INTERVIEW_HOUR), tzinfo=now.tzinfo)


def predicted_recall(store: Store, questions: Iterable[Question], at: datetime) -> dict[str, float]:
    """FSRS's probability of recalling each answered question at `at`, by question id; 0 for one
    whose latest answer was wrong or "Don't know", as Stats' mastery counts it: FSRS still gives
    a card rated Again about half a chance days later, though nothing shows the learner knows it."""
    from quizprep.study.scheduling import retrievability

    cards = store.cards()
    wrong = {qid for qid, right in store.latest_correct().items() if not right}
    return {q.id: 0.0 if q.id in wrong else retrievability(store.scheduler, cards[q.id], at)
            for q in questions if q.id in cards}


def forecast(store: Store, questions: Iterable[Question], on: date, now: datetime,
             titles: Mapping[str, str]) -> Forecast:
    """Per topic, the recall FSRS predicts for the interview on `on`, and the days left until it."""
    questions = list(questions)
    recall = predicted_recall(store, questions, interview_moment(on, now))
    answered = store.answered_ids()
    by_topic: dict[str, list[Question]] = {}
    for question in questions:
        by_topic.setdefault(question.topic, []).append(question)
    topics = []
    for topic, members in by_topic.items():
        seen = [q.id for q in members if q.id in answered]
        mean = sum(recall.get(qid, 0.0) for qid in seen) / len(members) if seen else None
        topics.append(TopicForecast(topic, titles.get(topic, topic), mean, len(seen), len(members)))
    topics.sort(key=lambda t: (-1.0 if t.recall is None else t.recall, t.topic))
    return Forecast(on, (on - now.date()).days, tuple(topics))


def saved_date(store: Store, today: date) -> date | None:
    """The interview date the learner set in an earlier run, unless it has passed."""
    text = store.setting(SETTING)
    try:
        on = date.fromisoformat(text) if text else None
    except ValueError:
        return None
    return on if on is not None and on >= today else None


def save_date(store: Store, on: date) -> None:
    store.set_setting(SETTING, on.isoformat())
