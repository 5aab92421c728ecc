"""Building study sessions: which questions a practice, review, interview, cram, mock or
single-question session asks, in which order; and picking up free responses an earlier run left
unassessed.
"""
from __future__ import annotations

import random
from collections import OrderedDict
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING, Collection, Iterable, Sequence

from quizprep.bank.model import FreeQuestion, NumericQuestion, Question
from quizprep.study.clock import Clock, utc_now
from quizprep.study.lengths import MOCK_MINUTES, MOCK_QUESTIONS
from quizprep.study.session import Session
from quizprep.study.showing import PendingAssessment, Showing
from quizprep.study.store import Answer, Store

if TYPE_CHECKING:
    from quizprep.bank.numeric import Draw
    from quizprep.study.limits import Allowance


def unassessed(store: Store, questions: Iterable[Question]) -> list[PendingAssessment]:
    """Free responses committed but never self-assessed, e.g. because the app was closed; pass one
    to `assess_answer` to finish it. Answers to questions no longer in the banks are left out."""
    by_id = {q.id: q for q in questions}
    pending = []
    for answer in store.unassessed():
        question = by_id.get(answer.question_id)
        if isinstance(question, FreeQuestion):
            showing = Showing(question, 0, answer.answered_at - timedelta(seconds=answer.elapsed_s))
            pending.append(PendingAssessment(showing, answer.id, answer.response, answer.elapsed_s))
    return pending


def reproduce_draw(question: NumericQuestion, answer: Answer) -> Draw:
    """The exact numbers a numeric answer was given for, from its recorded seed."""
    from quizprep.bank.numeric import draw

    if answer.seed is None:
        raise ValueError(f"answer {answer.id} has no recorded seed")
    return draw(question, answer.seed)


def practice(store: Store, questions: Sequence[Question], topics: Sequence[str] = (), *,
             limit: int | None = None, now: Clock = utc_now, rng: random.Random | None = None,
             allowance: Allowance | None = None) -> Session:
    """Drill the given topics (all when empty): due questions first (oldest due first), then
    questions never answered (easiest first), then the rest, soonest due first. A question
    answered wrong comes back once at the end of the session, after `limit` questions. Under daily
    limits (`allowance`, see quizprep.study.limits) it asks as Anki does: the due ones and the new
    ones up to what today's limits leave, none ahead of schedule."""
    pool = _in_topics(questions, topics)
    cards = store.cards()
    moment = now()
    due = sorted((q for q in pool if q.id in cards and cards[q.id].due <= moment), key=lambda q: cards[q.id].due)
    new = sorted((q for q in pool if q.id not in cards), key=lambda q: q.difficulty)
    later = sorted((q for q in pool if q.id in cards and cards[q.id].due > moment), key=lambda q: cards[q.id].due)
    if allowance is not None:
        due, new, later = due[:allowance.reviews_left], new[:allowance.new_left], []
    order = [q.id for q in due + new + later][:limit]
    return Session(store, "practice", {q.id: q for q in questions}, order, now, rng or random.Random(),
                   topics=tuple(topics), requeue_wrong=True, length=limit)


def review(store: Store, questions: Sequence[Question], topics: Sequence[str] = (), *,
           limit: int | None = None, now: Clock = utc_now, rng: random.Random | None = None,
           allowance: Allowance | None = None) -> Session:
    """Questions whose FSRS card is due, oldest due first, up to what today's review limit
    leaves (`allowance`). Questions never answered are not due. `due_reasons` says why, for
    those a graded exercise made due."""
    from quizprep.study.grades import due_reasons

    due = due_questions(store, _in_topics(questions, topics), now())
    order = [q.id for q in due[:None if allowance is None else allowance.reviews_left]][:limit]
    reasons = {qid: why for qid, why in due_reasons(store).items() if qid in order}
    return Session(store, "review", {q.id: q for q in questions}, order, now, rng or random.Random(),
                   topics=tuple(topics), due_reasons=reasons, length=limit)


def interview(store: Store, questions: Sequence[Question], topics: Sequence[str] = (), *, on: date,
              limit: int | None = None, now: Clock = utc_now, rng: random.Random | None = None,
              zone: tzinfo | None = timezone.utc, allowance: Allowance | None = None) -> Session:
    """Practice for an interview on `on`: the questions FSRS predicts the lowest recall for on
    that date come first (never answered counts as 0, easiest first among those). A question
    answered wrong comes back once at the end of the session. The interview is on that date's
    morning in `zone` (None: this machine's zone), as in `interview.forecast`. Under daily limits
    (`allowance`) questions never answered count against the new limit, the others against the
    review limit."""
    from quizprep.study.interview import interview_moment, predicted_recall

    pool = _in_topics(questions, topics)
    recall = predicted_recall(store, pool, interview_moment(on, now().astimezone(zone)))
    weakest = sorted(pool, key=lambda q: (recall.get(q.id, 0.0), q.difficulty))
    order = [q.id for q in _within_allowance(weakest, store.cards().keys(), allowance)][:limit]
    return Session(store, "practice", {q.id: q for q in questions}, order, now, rng or random.Random(),
                   topics=tuple(topics), requeue_wrong=True, length=limit)


def _within_allowance(ordered: Sequence[Question], answered: Collection[str],
                      allowance: Allowance | None) -> list[Question]:
    """`ordered`, in its order, up to what today's limits leave: questions never answered count
    against the new limit, those in `answered` against the review limit."""
    if allowance is None:
        return list(ordered)
    new = [q.id for q in ordered if q.id not in answered][:allowance.new_left]
    reviews = [q.id for q in ordered if q.id in answered][:allowance.reviews_left]
    kept = set(new + reviews)
    return [q for q in ordered if q.id in kept]


def cram(store: Store, questions: Sequence[Question], topics: Sequence[str] = (), *,
         limit: int | None = None, now: Clock = utc_now, rng: random.Random | None = None) -> Session:
    """Drill weak questions without moving their FSRS cards (answers are recorded all the same):
    those whose predicted recall now is below FSRS's desired retention, never answered or answered
    wrong last time; lowest recall first. For the last days before an interview."""
    from quizprep.study.interview import predicted_recall

    pool = _in_topics(questions, topics)
    recall = predicted_recall(store, pool, now())  # 0 for one answered wrong last time
    weak = [q for q in pool if recall.get(q.id, 0.0) < store.scheduler.desired_retention]
    order = [q.id for q in sorted(weak, key=lambda q: (recall.get(q.id, 0.0), q.difficulty))][:limit]
    return Session(store, "cram", {q.id: q for q in questions}, order, now, rng or random.Random(),
                   topics=tuple(topics), requeue_wrong=True, length=limit)


def mock(store: Store, questions: Sequence[Question], topics: Sequence[str] = (), *,
         count: int = MOCK_QUESTIONS, minutes: float = MOCK_MINUTES, now: Clock = utc_now,
         rng: random.Random | None = None) -> Session:
    """A timed interview round of `count` questions mixed across topics (taking turns) and kinds,
    each followed by its chained follow-ups, which count among the `count`. Questions that are some
    other question's follow-up only open a round when nothing else is left."""
    rng = rng or random.Random()
    pool = _in_topics(questions, topics)
    followers = {qid for q in pool for qid in q.chain}
    by_topic: OrderedDict[str, list[Question]] = OrderedDict()
    for question in sorted(pool, key=lambda q: (q.id in followers, rng.random())):
        by_topic.setdefault(question.topic, []).append(question)
    order: list[str] = []
    topic_names = list(by_topic)
    rng.shuffle(topic_names)
    while len(order) < count and any(by_topic.values()):
        for topic in topic_names:
            if by_topic[topic] and len(order) < count:
                order.append(by_topic[topic].pop(0).id)
    return Session(store, "mock", {q.id: q for q in questions}, order, now, rng,
                   time_limit=timedelta(minutes=minutes), topics=tuple(topics), length=count)


def single(store: Store, questions: Sequence[Question], question_id: str, *, now: Clock = utc_now,
           rng: random.Random | None = None) -> Session:
    """One question by id, asked once: what the grader's "Learn it: quiz question X" opens."""
    by_id = {q.id: q for q in questions}
    if question_id not in by_id:
        raise ValueError(f"no question has id {question_id!r}")
    return Session(store, "practice", by_id, [question_id], now, rng or random.Random(),
                   topics=(by_id[question_id].topic,))


def due_questions(store: Store, questions: Iterable[Question], at: datetime) -> list[Question]:
    cards = store.cards()
    due = [q for q in questions if q.id in cards and cards[q.id].due <= at]
    return sorted(due, key=lambda q: cards[q.id].due)


def next_due(store: Store, questions: Iterable[Question]) -> datetime | None:
    """When the first of these questions' cards comes due; None when none has a card."""
    cards = store.cards()
    return min((cards[q.id].due for q in questions if q.id in cards), default=None)


def _in_topics(questions: Iterable[Question], topics: Sequence[str]) -> list[Question]:
    wanted = set(topics)
    pool = [q for q in questions if not wanted or q.topic in wanted]
    if wanted and not pool:
        raise ValueError(f"no questions in topic(s): {', '.join(sorted(wanted))}")
    return pool

