"""Home's overview: per topic, its questions, what is due, accuracy and mastery (defined in
`quizprep.study.stats`, which builds the rest of the statistics on these). Kept apart from the
stats screen's classes so that a start to Home does not define them."""
from __future__ import annotations

from collections import OrderedDict
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Iterable, Mapping, NamedTuple, Sequence

if TYPE_CHECKING:
    from quizprep.bank.model import Question
    from quizprep.bank.summary import QuestionRef
    from quizprep.study.store import Store

# What a value with nothing to compute it from reads, the same in the app, `quizprep stats` and
# reports (an en dash in one and an em dash in the other looked like two meanings).
NO_DATA = "—"
MASTERY_HORIZON = timedelta(days=7)
SHORT_TITLE_MARKS = (" (", ": ", " — ")


def percent(value: float | None) -> str:
    return NO_DATA if value is None else f"{value:.0%}"


class TopicStats(NamedTuple):
    topic: str
    title: str
    questions: int
    seen: int  # questions answered at least once (an exercise grade alone does not count)
    due: int
    attempts: int
    accuracy: float | None
    mastery: float | None


def topic_overview(store: Store, questions: Sequence[Question | QuestionRef], *, now: datetime | None = None,
                   titles: Mapping[str, str] | None = None, filtered: bool = False) -> list[TopicStats]:
    """Per-topic counts, due cards, accuracy and mastery, for the home screen. Aggregated in
    SQLite: the app's start-up does not grow with the learner's history. `filtered`: `questions`
    is a search's result, and accuracy counts only the answers to them. Only each question's id
    and topic are read: Home counts the banks' summary (`quizprep.bank.summary`)."""
    from quizprep.study.scheduling import scheduled_recall

    now = now or datetime.now(timezone.utc)
    titles = titles or {}
    schedules = store.schedules()
    scores = store.topic_scores([q.id for q in questions] if filtered else None)
    last_right = store.latest_correct()
    answered = store.answered_ids()
    by_topic: OrderedDict[str, list[Question | QuestionRef]] = OrderedDict()
    for question in questions:
        by_topic.setdefault(question.topic, []).append(question)
    for topic in scores:  # topics whose bank is gone still have a history
        by_topic.setdefault(topic, [])
    horizon = now + MASTERY_HORIZON
    result = []
    for topic, members in by_topic.items():
        attempts, accuracy = scores.get(topic, (0, None))
        topic_schedules = [schedules.get(q.id) for q in members]
        result.append(TopicStats(
            topic=topic,
            title=titles.get(topic, topic),
            questions=len(members),
            seen=sum(q.id in answered for q in members),
            due=sum(schedule is not None and schedule.due <= now for schedule in topic_schedules),
            attempts=attempts,
            accuracy=accuracy,
            mastery=mean(scheduled_recall(store.scheduler, schedule, horizon) if last_right.get(q.id) else 0.0
                         for q, schedule in zip(members, topic_schedules)),
        ))
    return result


def short_title(title: str) -> str:
    """A topic's title without its detail: "Softmax: stability, saturation, gradients" is
    "Softmax", "Memory of attention (score matrices, …)" is "Memory of attention". Tables that
    must fit 80 columns show these; reports keep the whole title."""
    cut = min((title.find(mark) for mark in SHORT_TITLE_MARKS if title.find(mark) > 0), default=len(title))
    return title[:cut].rstrip()


def mean(values: Iterable[float]) -> float | None:
    """The mean; None for no values."""
    values = list(values)
    return sum(values) / len(values) if values else None
