"""Study sessions without a UI: what to ask next, judging answers, committing them at once.

A session is a queue of questions. `next()` shows one (numeric questions get a fresh draw and a
recorded seed), an `answer_*` call judges it and commits it to the store before returning the
feedback. Free responses take two steps: `answer_free` commits the text, `assess` commits the
rubric self-assessment. All time comes from the injectable `now` clock (aware UTC datetimes).

The values it hands out (`Showing`, `Feedback`...) are defined in `quizprep.study.showing` and
imported from here. The builders (`practice`, `review`, `mock`, `single`, `unassessed`...) live in
`quizprep.study.builders`, which imports this module.
"""
from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Iterable, Sequence, TypeVar

from quizprep.bank.model import ChoiceQuestion, FreeQuestion, NumericQuestion, Question
from quizprep.study.clock import Clock, utc_now
from quizprep.study.drafts import Drafts
from quizprep.study.rubric import assess_answer, due_after, rubric_marks, rubric_verdict
from quizprep.study.showing import (
    Feedback, FeedbackDetails, InputError, PendingAssessment, SessionReport, Showing, Tally, TopicScore,
)
from quizprep.study.store import Store

if TYPE_CHECKING:
    from fsrs import Rating

MODES = ("practice", "review", "mock", "cram")
SEED_LIMIT = 2**31
QuestionKind = TypeVar("QuestionKind", ChoiceQuestion, NumericQuestion, FreeQuestion)


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
    # At most this many questions asked for the first time, a mock's follow-ups included; a miss
    # asked again comes on top, as Anki's relearning cards do beside its new ones.
    length: int | None = None

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
        self._drafts = Drafts(self.store, self.now)
        self._ended_at: datetime | None = None

    # -- flow ------------------------------------------------------------------------------

    @property
    def total(self) -> int:
        """Questions this session asks as things stand: shown plus still to come (a follow-up or a
        miss asked again may add one); within its length, but for the misses asked again."""
        tally = self.tally()
        return tally.planned + tally.again_planned

    @property
    def round_size(self) -> int | None:
        """A mock round's questions, answered or not, which it is scored over; None for other modes."""
        return self.total if self.mode == "mock" else None

    @property
    def remaining(self) -> int:
        return self.total - len(self.shown)

    def tally(self) -> Tally:
        """The questions asked and to ask, first asks and misses asked again counted apart: a
        miss adds one to ask again, never to the questions planned, with or without a length
        (within one a miss took a planned question's place: "2/10" became "3/9 · 1 again")."""
        again_waiting = sum(1 for qid in self.queue if qid in self._requeued)
        again_shown = sum(1 for showing in self.shown if showing.again)
        first_shown = len(self.shown) - again_shown
        planned = first_shown + len(self.queue) - again_waiting
        if self.length is not None:
            planned = min(planned, self.length)
        return Tally(first_shown, planned, again_shown, again_shown + again_waiting)

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
        return self._ended_at is not None or not self.remaining or self.out_of_time

    @property
    def schedules(self) -> bool:
        """Whether answers move FSRS cards: not in cram mode, which drills without touching them."""
        return self.mode != "cram"

    def next(self) -> Showing | None:
        """Show the next question (None when the session is over). A numeric question gets fresh
        numbers, drawn from a new seed that is recorded with the answer; a choice question its
        choices in a fresh order, unless its bank says `shuffle: false`."""
        if self.finished:
            return None
        question = self.questions[self.queue.pop(self._next_place())]
        again = any(shown.question.id == question.id for shown in self.shown)
        draw_ = None
        order: tuple[int, ...] = ()
        if isinstance(question, NumericQuestion):
            from quizprep.bank.numeric import draw

            fresh = self.rng.randrange(1, SEED_LIMIT)  # drawn either way: later draws stay as they were
            # A draft typed for earlier numbers comes back with those numbers.
            draw_ = draw(question, self._drafts.seed(question.id) or fresh)
        elif isinstance(question, ChoiceQuestion):
            order = tuple(range(len(question.choices)))
            if question.shuffle:
                order = tuple(self.rng.sample(order, len(order)))  # drawn either way, as numbers are
        # Asked as its draft left it (an answer taken back, a pick before a restart): a choice in
        # the order its number keys were learned in, picked as it was; a free answer's rubric ticks.
        showing = replace(Showing(question, len(self.shown) + 1, self.now(), draw_, self._parent.get(question.id),
                                  order, again), **self._drafts.shown(question))
        self.shown.append(showing)
        self._asked.add(question.id)
        self.current = showing
        self._answered_current = False
        return showing

    def _next_place(self) -> int:
        """Where in the queue the next question is: the first, until the length's first asks are
        all shown; then the first miss waiting to be asked again (misses come last)."""
        tally = self.tally()
        if tally.place < tally.planned:
            return 0
        return next(place for place, qid in enumerate(self.queue) if qid in self._requeued)

    def end(self) -> SessionReport:
        """Close the session (idempotent) and report on it."""
        if self._ended_at is None:
            self._ended_at = self.now()
            self.store.end_session(self.session_id, self._ended_at, self.round_size)
        return self.report()

    # -- answering -------------------------------------------------------------------------

    def understand(self, showing: Showing, text: str) -> str:
        """What a numeric answer is read as, e.g. "34,359,738,368 B (32 GiB)"; raises InputError."""
        from quizprep.bank.units import UnitError, parse_quantity

        question = self._expect(showing, NumericQuestion)
        try:
            return parse_quantity(text, question.unit, question.display_unit).understood
        except UnitError as error:
            raise InputError(str(error)) from error

    def draft(self, showing: Showing) -> str:
        """The answer to this question typed earlier and not handed in ("" when none)."""
        return self._drafts.text(showing.question.id)

    def keep_draft(self, showing: Showing, text: str, picked: Iterable[int] = ()) -> None:
        """Save the answer being given to the question shown: the text typed (with the seed of its
        numbers) or the choices `picked`; once it is answered (which drops the draft) nothing more is kept."""
        if showing is self.current and not self._answered_current:
            self._drafts.keep(showing, text, frozenset(picked))

    def answer_choice(self, showing: Showing, picked: Iterable[int]) -> Feedback:
        """Judge the picked choice indices (0-based): right only when exactly the correct set."""
        question = self._expect(showing, ChoiceQuestion)
        chosen = frozenset(picked)
        if not chosen or any(not 0 <= i < len(question.choices) for i in chosen):
            raise InputError(f"pick one or more of choices 1–{len(question.choices)}")
        correct = chosen == question.correct_indices
        response = ",".join(str(i + 1) for i in sorted(chosen))
        return self._commit(showing, response, correct, {"picked": chosen})

    def answer_numeric(self, showing: Showing, text: str) -> Feedback:
        """Judge a typed number; raises InputError (recording nothing) when it cannot be read."""
        from quizprep.bank.numeric import judge, worked_steps

        question = self._expect(showing, NumericQuestion)
        assert showing.draw is not None
        verdict = judge(question, showing.draw, text)
        if verdict.error:
            raise InputError(verdict.error)
        return self._commit(showing, text.strip(), verdict.correct,
                            {"verdict": verdict, "worked": tuple(worked_steps(question, showing.draw))})

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
        self._drafts.drop(question.id)
        return PendingAssessment(showing, answer_id, text, elapsed)

    def assess(self, pending: PendingAssessment, met: Sequence[bool]) -> Feedback:
        """Commit the self-assessment: `met[i]` says whether rubric item i was covered."""
        feedback = assess_answer(self.store, pending, met, self.now(), schedule=self.schedules)
        self._after(feedback)
        return feedback

    def skip(self, showing: Showing) -> Feedback:
        """"I don't know": recorded as a wrong answer (rated Again), so the question comes back
        soon; the feedback carries the explanation and, for a numeric question, the worked steps."""
        self._expect_answerable(showing)
        question = showing.question
        details: FeedbackDetails = {"skipped": True}
        if isinstance(question, NumericQuestion):
            from quizprep.bank.numeric import worked_steps

            assert showing.draw is not None
            details["worked"] = tuple(worked_steps(question, showing.draw))
        elif isinstance(question, FreeQuestion):
            details["rubric_met"] = (False,) * len(question.rubric)
        return self._commit(showing, "", False, details)

    def reassess(self, feedback: Feedback, met: Sequence[bool]) -> Feedback:
        """Change the rubric ticks of a free answer assessed in this session: its score and rating
        are replaced and its question's card is rebuilt from its history; in practice, a pass or
        fail now decides whether it is asked again at the end. Returns the new feedback, which
        takes the old one's place in `feedback`."""
        if not isinstance(feedback.question, FreeQuestion) or feedback.skipped:
            raise ValueError("only a free answer self-assessed in this session can be reassessed")
        place = self._place(feedback, "only a free answer self-assessed in this session can be reassessed")
        question = feedback.question
        score, rating, correct = rubric_verdict(question, met)
        rating_kept = rating if self.schedules else None
        card = self.store.reassess(feedback.answer_id, rubric_marks(question, met), score=score, correct=correct,
                                   rating=rating_kept)
        updated = replace(feedback, score=score, correct=correct, rating=rating,
                          next_due=card.due if card else feedback.next_due, rubric_met=tuple(bool(ok) for ok in met))
        self.feedback[place] = updated
        if self.requeue_wrong and updated.correct != feedback.correct:
            self._requeue(question.id, wanted=not updated.correct)
        return updated

    def rate(self, feedback: Feedback, rating: Rating) -> Feedback:
        """The learner's own rating of an answer given in this session (Again/Hard/Good/Easy)
        replaces the one its verdict gave; the card is rebuilt with it. Returns the new feedback,
        which takes the old one's place in `feedback`."""
        place = self._place(feedback, "only an answer given in this session can be rated")
        if not self.schedules:
            raise ValueError("cram answers are not rated: they leave the schedule alone")
        card = self.store.rerate(feedback.answer_id, rating)
        updated = replace(feedback, rating=rating, next_due=card.due if card else feedback.next_due)
        self.feedback[place] = updated
        return updated

    def undo(self, feedback: Feedback) -> None:
        """Take back the last answer: it leaves the store, its question's card is rebuilt from
        the answers before it, and the question is asked again next with all that was entered
        as its draft (see Drafts.put_back)."""
        if not self.feedback or self.feedback[-1].answer_id != feedback.answer_id:
            raise ValueError("only the last answer of the session can be undone")
        self.store.remove_answer(feedback.answer_id)
        self.feedback.pop()
        self.shown.remove(feedback.showing)
        question_id = feedback.question.id
        self._drafts.put_back(feedback)
        if question_id in self._requeued and question_id in self.queue:
            self._requeue(question_id, wanted=False)
        self.queue.insert(0, question_id)

    def undo_before(self, showing: Showing) -> Feedback:
        """From the question shown, take back the answer given just before it, as Anki's Ctrl+Z
        does on the next card: the question shown goes back to the head of the queue unanswered
        (its draft kept), and the answer is taken back as `undo` does, so it is asked first.
        Returns the feedback taken back; raises ValueError when there is none to take back."""
        self._expect_answerable(showing)
        if self.mode == "mock":
            raise ValueError("a mock interview's answers stand, as in an interview")
        place = self.shown.index(showing)
        before = self.shown[place - 1] if place else None
        last = self.feedback[-1] if self.feedback else None
        if last is None or before is None:
            raise ValueError("no answer in this session to take back yet")
        if last.showing is not before:  # a free answer whose rubric was left for later
            raise ValueError(f"the answer to {before.question.id} awaits its rubric; it can be changed next start")
        self.undo(last)  # first: a store that fails leaves the session as it was
        self.shown.remove(showing)
        if all(shown.question.id != showing.question.id for shown in self.shown):
            self._asked.discard(showing.question.id)  # a follow-up is chained again as if never asked
        self.queue.insert(1, showing.question.id)
        self.current = None
        return last

    def _place(self, feedback: Feedback, refusal: str) -> int:
        place = next((i for i, given in enumerate(self.feedback) if given.answer_id == feedback.answer_id), None)
        if place is None:
            raise ValueError(refusal)
        return place

    def _expect(self, showing: Showing, kind: type[QuestionKind]) -> QuestionKind:
        """The question shown, which must be of `kind` and still await its answer."""
        if not isinstance(showing.question, kind):
            raise TypeError(f"{showing.question.id} is a {showing.question.kind} question")
        self._expect_answerable(showing)
        return showing.question

    def _expect_answerable(self, showing: Showing) -> None:
        if showing is not self.current:
            raise ValueError("answer the question currently shown")
        if self._answered_current:
            raise ValueError(f"{showing.question.id} has already been answered in this showing")

    def _commit(self, showing: Showing, response: str, correct: bool, details: FeedbackDetails) -> Feedback:
        from quizprep.study.scheduling import rating_for_answer, slow_after

        question = showing.question
        answered_at = self.now()
        elapsed = _seconds(answered_at - showing.shown_at)
        rating = rating_for_answer(question.kind, question.difficulty, correct, elapsed)
        answer_id, card = self.store.record_answer(
            question_id=question.id, topic=question.topic, kind=question.kind, mode=self.mode,
            response=response, elapsed_s=elapsed, answered_at=answered_at,
            seed=showing.draw.seed if showing.draw else None, correct=correct,
            score=1.0 if correct else 0.0, rating=rating if self.schedules else None, session_id=self.session_id,
        )
        feedback = Feedback(showing, answer_id, response, correct, 1.0 if correct else 0.0, rating,
                            elapsed, correct and elapsed > slow_after(question.kind, question.difficulty),
                            due_after(self.store, question.id, card, answered_at), **details)
        self._answered_current = True
        self._drafts.drop(question.id)
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
        elif self.requeue_wrong and not feedback.correct:
            self._requeue(question.id, wanted=True)

    def _requeue(self, question_id: str, *, wanted: bool) -> None:
        """Ask a question answered wrong once more at the end (once per session); a reassessment
        that makes it right takes it back out if it has not been asked again yet."""
        if wanted and question_id not in self._requeued:
            self._requeued.add(question_id)
            self.queue.append(question_id)
        elif not wanted and question_id in self._requeued and question_id in self.queue:
            self._requeued.discard(question_id)
            del self.queue[len(self.queue) - 1 - self.queue[::-1].index(question_id)]  # the copy at the end

    # -- reporting -------------------------------------------------------------------------

    def report(self) -> SessionReport:
        per_topic: OrderedDict[str, list[float]] = OrderedDict()
        for feedback in self.feedback:
            per_topic.setdefault(feedback.question.topic, []).append(feedback.score)
        answered = {f.showing.number for f in self.feedback}
        # A miss queued to be asked again is under "To revisit" already.
        tally = self.tally()
        still_planned = tuple([qid for qid in self.queue if qid not in self._requeued][:tally.planned - tally.place])
        unanswered = tuple(s.question.id for s in self.shown if s.number not in answered) + still_planned
        return SessionReport(
            mode=self.mode, started_at=self.started_at, ended_at=self._ended_at or self.now(),
            feedback=tuple(self.feedback), unanswered=unanswered,
            topics=tuple(TopicScore(topic, len(scores), sum(scores), len(scores))
                         for topic, scores in per_topic.items()),
            missed=tuple((f.question.id, item.criterion) for f in self.feedback for item in f.missed),
            out_of_time=self.out_of_time,
            draws={s.question.id: s.draw for s in self.shown if s.number not in answered and s.draw is not None},
            round_size=self.round_size,
        )


def _seconds(delta: timedelta) -> float:
    return max(0.0, delta.total_seconds())
