"""Study sessions without a UI: what to ask next, judging answers, committing them at once.

A session is a queue of questions. `next()` shows one (numeric questions get a fresh draw and a
recorded seed), an `answer_*` call judges it and commits it to the store before returning the
feedback. Free responses take two steps: `answer_free` commits the text, `assess` commits the
rubric self-assessment. All time comes from the injectable `now` clock (aware UTC datetimes).
"""
from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Iterable, Sequence

from quizprep.bank.model import ChoiceQuestion, FreeQuestion, NumericQuestion, Question, RubricItem
from quizprep.study.clock import Clock, utc_now
from quizprep.study.store import Answer, Store

if TYPE_CHECKING:
    from fsrs import Rating

    from quizprep.bank.numeric import Draw, NumericVerdict

MODES = ("practice", "review", "mock")
MOCK_QUESTIONS = 8
MOCK_MINUTES = 20
SEED_LIMIT = 2**31


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

    @property
    def score(self) -> float:
        possible = sum(t.possible for t in self.topics)
        return sum(t.score for t in self.topics) / possible if possible else 0.0


@dataclass
class Session:
    """Use `practice()`, `review()` or `mock()` to build one."""

    store: Store
    mode: str
    questions: dict[str, Question]
    queue: list[str]
    now: Clock = utc_now
    rng: random.Random = field(default_factory=random.Random)
    time_limit: timedelta | None = None
    topics: tuple[str, ...] = ()
    requeue_wrong: bool = False
    due_reasons: dict[str, str] = field(default_factory=dict)  # question id -> why it is due (review)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        self.started_at = self.now()
        self.session_id = self.store.start_session(self.mode, self.topics, self.started_at)
        self.shown: list[Showing] = []
        self.feedback: list[Feedback] = []
        self.current: Showing | None = None
        self._answered_current = False
        self._requeued: set[str] = set()
        self._asked: set[str] = set()
        self._parent: dict[str, str] = {}
        self._ended_at: datetime | None = None

    # -- flow ------------------------------------------------------------------------------

    @property
    def total(self) -> int:
        """Questions in this session so far: shown plus still queued (follow-ups may add more)."""
        return len(self.shown) + len(self.queue)

    @property
    def remaining(self) -> int:
        return len(self.queue)

    def remaining_time(self) -> timedelta | None:
        """Time left in a timed (mock) session, never negative; None when untimed."""
        if self.time_limit is None:
            return None
        return max(timedelta(0), self.started_at + self.time_limit - self.now())

    @property
    def out_of_time(self) -> bool:
        left = self.remaining_time()
        return left is not None and left <= timedelta(0)

    @property
    def finished(self) -> bool:
        return self._ended_at is not None or not self.queue or self.out_of_time

    def next(self) -> Showing | None:
        """Show the next question (None when the session is over). A numeric question gets fresh
        numbers, drawn from a new seed that is recorded with the answer."""
        if self.finished:
            return None
        question = self.questions[self.queue.pop(0)]
        draw_ = None
        if isinstance(question, NumericQuestion):
            from quizprep.bank.numeric import draw

            draw_ = draw(question, self.rng.randrange(1, SEED_LIMIT))
        showing = Showing(question, len(self.shown) + 1, self.now(), draw_, self._parent.get(question.id))
        self.shown.append(showing)
        self._asked.add(question.id)
        self.current = showing
        self._answered_current = False
        return showing

    def end(self) -> SessionReport:
        """Close the session (idempotent) and report on it."""
        if self._ended_at is None:
            self._ended_at = self.now()
            self.store.end_session(self.session_id, self._ended_at)
        return self.report()

    # -- answering -------------------------------------------------------------------------

    def understand(self, showing: Showing, text: str) -> str:
        """What a numeric answer is read as, e.g. "34,359,738,368 B (32 GiB)"; raises InputError."""
        from quizprep.bank.units import UnitError, parse_quantity

        question = self._expect(showing, NumericQuestion)
        try:
            return parse_quantity(text, question.unit).understood
        except UnitError as error:
            raise InputError(str(error)) from error

    def answer_choice(self, showing: Showing, picked: Iterable[int]) -> Feedback:
        """Judge the picked choice indices (0-based): right only when exactly the correct set."""
        question = self._expect(showing, ChoiceQuestion)
        chosen = frozenset(picked)
        if not chosen or any(not 0 <= i < len(question.choices) for i in chosen):
            raise InputError(f"pick one or more of choices 1–{len(question.choices)}")
        correct = chosen == question.correct_indices
        response = ",".join(str(i + 1) for i in sorted(chosen))
        return self._commit(showing, response, correct, picked=chosen)

    def answer_numeric(self, showing: Showing, text: str) -> Feedback:
        """Judge a typed number; raises InputError (recording nothing) when it cannot be read."""
        from quizprep.bank.numeric import judge, worked_steps

        question = self._expect(showing, NumericQuestion)
        assert showing.draw is not None
        verdict = judge(question, showing.draw, text)
        if verdict.error:
            raise InputError(verdict.error)
        return self._commit(showing, text.strip(), verdict.correct, verdict=verdict,
                            worked=tuple(worked_steps(question, showing.draw)))

    def answer_free(self, showing: Showing, text: str) -> PendingAssessment:
        """Commit a free response now; the rubric self-assessment follows with `assess`."""
        question = self._expect(showing, FreeQuestion)
        if not text.strip():
            raise InputError("write an answer before comparing it with the model answer")
        answered_at = self.now()
        elapsed = _seconds(answered_at - showing.shown_at)
        answer_id, _ = self.store.record_answer(
            question_id=question.id, topic=question.topic, kind=question.kind, mode=self.mode,
            response=text, elapsed_s=elapsed, answered_at=answered_at, session_id=self.session_id,
        )
        self._answered_current = True
        return PendingAssessment(showing, answer_id, text, elapsed)

    def assess(self, pending: PendingAssessment, met: Sequence[bool]) -> Feedback:
        """Commit the self-assessment: `met[i]` says whether rubric item i was covered."""
        feedback = assess_answer(self.store, pending, met, self.now())
        self._after(feedback)
        return feedback

    def _expect(self, showing: Showing, kind: type) -> Question:
        if not isinstance(showing.question, kind):
            raise TypeError(f"{showing.question.id} is a {showing.question.kind} question")
        if showing is not self.current:
            raise ValueError("answer the question currently shown")
        if self._answered_current:
            raise ValueError(f"{showing.question.id} has already been answered in this showing")
        return showing.question

    def _commit(self, showing: Showing, response: str, correct: bool, **details: object) -> Feedback:
        from quizprep.study.scheduling import rating_for_answer, slow_after

        question = showing.question
        answered_at = self.now()
        elapsed = _seconds(answered_at - showing.shown_at)
        rating = rating_for_answer(question.kind, question.difficulty, correct, elapsed)
        answer_id, card = self.store.record_answer(
            question_id=question.id, topic=question.topic, kind=question.kind, mode=self.mode,
            response=response, elapsed_s=elapsed, answered_at=answered_at,
            seed=showing.draw.seed if showing.draw else None, correct=correct,
            score=1.0 if correct else 0.0, rating=rating, session_id=self.session_id,
        )
        assert card is not None
        feedback = Feedback(showing, answer_id, response, correct, 1.0 if correct else 0.0, rating,
                            elapsed, correct and elapsed > slow_after(question.kind, question.difficulty),
                            card.due, **details)  # type: ignore[arg-type]
        self._answered_current = True
        self._after(feedback)
        return feedback

    def _after(self, feedback: Feedback) -> None:
        self.feedback.append(feedback)
        question = feedback.question
        if self.mode == "mock":
            # Follow-ups come straight after the question they follow, as in an interview.
            chained = [qid for qid in question.chain if qid in self.questions and qid not in self._asked]
            for qid in chained:
                self._parent[qid] = question.id
            # A follow-up already queued for later moves up: it is asked right after its parent.
            self.queue[:] = chained + [qid for qid in self.queue if qid not in chained]
        elif self.requeue_wrong and not feedback.correct and question.id not in self._requeued:
            self._requeued.add(question.id)
            self.queue.append(question.id)

    # -- reporting -------------------------------------------------------------------------

    def report(self) -> SessionReport:
        per_topic: OrderedDict[str, list[float]] = OrderedDict()
        for feedback in self.feedback:
            per_topic.setdefault(feedback.question.topic, []).append(feedback.score)
        answered = {f.showing.number for f in self.feedback}
        unanswered = tuple(s.question.id for s in self.shown if s.number not in answered) + tuple(self.queue)
        return SessionReport(
            mode=self.mode, started_at=self.started_at, ended_at=self._ended_at or self.now(),
            feedback=tuple(self.feedback), unanswered=unanswered,
            topics=tuple(TopicScore(topic, len(scores), sum(scores), len(scores))
                         for topic, scores in per_topic.items()),
            missed=tuple((f.question.id, item.criterion) for f in self.feedback for item in f.missed),
            out_of_time=self.out_of_time,
        )


def assess_answer(store: Store, pending: PendingAssessment, met: Sequence[bool], now: datetime) -> Feedback:
    """Commit a rubric self-assessment (also for answers left unassessed by an earlier run)."""
    from quizprep.study.scheduling import PASS_SCORE, rating_for_score

    question = pending.question
    if len(met) != len(question.rubric):
        raise InputError(f"the rubric has {len(question.rubric)} items, got {len(met)} marks")
    score = sum(item.weight for item, ok in zip(question.rubric, met) if ok) / question.total_weight
    rating = rating_for_score(score)
    correct = score >= PASS_SCORE
    card = store.record_assessment(
        pending.answer_id, [(item.criterion, item.weight, bool(ok)) for item, ok in zip(question.rubric, met)],
        score=score, correct=correct, rating=rating, assessed_at=now,
    )
    return Feedback(pending.showing, pending.answer_id, pending.response, correct, score, rating,
                    pending.elapsed_s, False, card.due, rubric_met=tuple(bool(ok) for ok in met))


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


# -- building sessions ---------------------------------------------------------------------

def practice(store: Store, questions: Sequence[Question], topics: Sequence[str] = (), *,
             limit: int | None = None, now: Clock = utc_now, rng: random.Random | None = None) -> Session:
    """Drill the given topics (all when empty): due questions first (oldest due first), then
    questions never answered (easiest first), then the rest, soonest due first. A question
    answered wrong comes back once at the end of the session."""
    pool = _in_topics(questions, topics)
    cards = store.cards()
    moment = now()
    due = sorted((q for q in pool if q.id in cards and cards[q.id].due <= moment), key=lambda q: cards[q.id].due)
    new = sorted((q for q in pool if q.id not in cards), key=lambda q: q.difficulty)
    later = sorted((q for q in pool if q.id in cards and cards[q.id].due > moment), key=lambda q: cards[q.id].due)
    order = [q.id for q in due + new + later][:limit]
    return Session(store, "practice", {q.id: q for q in questions}, order, now, rng or random.Random(),
                   topics=tuple(topics), requeue_wrong=True)


def review(store: Store, questions: Sequence[Question], topics: Sequence[str] = (), *,
           limit: int | None = None, now: Clock = utc_now, rng: random.Random | None = None) -> Session:
    """Questions whose FSRS card is due, oldest due first. Questions never answered are not due.
    `due_reasons` says why, for those a graded exercise made due."""
    from quizprep.study.grades import due_reasons

    order = [q.id for q in due_questions(store, _in_topics(questions, topics), now())][:limit]
    reasons = {qid: why for qid, why in due_reasons(store).items() if qid in order}
    return Session(store, "review", {q.id: q for q in questions}, order, now, rng or random.Random(),
                   topics=tuple(topics), due_reasons=reasons)


def mock(store: Store, questions: Sequence[Question], topics: Sequence[str] = (), *,
         count: int = MOCK_QUESTIONS, minutes: float = MOCK_MINUTES, now: Clock = utc_now,
         rng: random.Random | None = None) -> Session:
    """A timed interview round: `count` questions mixed across topics (taking turns) and kinds,
    each followed by its chained follow-ups. Questions that are some other question's follow-up
    only open a round when nothing else is left."""
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
                   time_limit=timedelta(minutes=minutes), topics=tuple(topics))


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


def _in_topics(questions: Iterable[Question], topics: Sequence[str]) -> list[Question]:
    wanted = set(topics)
    pool = [q for q in questions if not wanted or q.topic in wanted]
    if wanted and not pool:
        raise ValueError(f"no questions in topic(s): {', '.join(sorted(wanted))}")
    return pool


def _seconds(delta: timedelta) -> float:
    return max(0.0, delta.total_seconds())
