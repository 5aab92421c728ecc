"""Answers being given, kept in the progress store so that closing the app loses none of them:
the text typed, a choice's picks (with the order its number keys were learned in) and, for a
free answer taken back, its rubric ticks."""
from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from quizprep.bank.model import ChoiceQuestion, FreeQuestion, Question
from quizprep.study.clock import Clock
from quizprep.study.showing import Feedback, Showing
from quizprep.study.store import Store, StoreError

Marks = dict[str, list[int] | list[bool]]


def choice_marks(order: Sequence[int], picked: Iterable[int]) -> Marks:
    """A choice's marks: the order its number keys were learned in and the indices picked."""
    return {"choice_order": list(order), "picked": sorted(picked)}


def tick_marks(ticks: Sequence[bool]) -> Marks:
    """A free answer's marks: its rubric's ticks."""
    return {"ticked": list(ticks)}


def marks_of(showing: Showing, picked: frozenset[int]) -> Marks | None:
    """What a draft keeps beside its text: a choice's order and `picked` (None when nothing is
    picked), a free answer's ticks from before it was taken back."""
    if isinstance(showing.question, ChoiceQuestion):
        return choice_marks(showing.choice_order, picked) if picked else None
    return tick_marks(showing.ticked) if showing.ticked else None


def shown_with(question: Question, saved: str) -> dict[str, Any]:
    """The Showing fields the marks `saved` (JSON) give `question`; none that no longer fit it (its
    bank changed since: other choices, another rubric) or that are garbled."""
    try:
        marks = json.loads(saved) if saved else {}
    except ValueError:
        return {}
    if not isinstance(marks, dict):
        return {}
    if isinstance(question, ChoiceQuestion):
        size = len(question.choices)
        order, picked = marks.get("choice_order"), marks.get("picked")
        if (isinstance(order, list) and sorted(order) == list(range(size)) and isinstance(picked, list)
                and all(type(i) is int and 0 <= i < size for i in picked)):
            return {"choice_order": tuple(order), "picked": frozenset(picked)}
    elif isinstance(question, FreeQuestion):
        ticked = marks.get("ticked")
        if isinstance(ticked, list) and len(ticked) == len(question.rubric) and all(type(t) is bool for t in ticked):
            return {"ticked": tuple(ticked)}
    return {}


class Drafts:
    """One session's drafts: read back, kept while the learner answers, dropped once answered."""

    def __init__(self, store: Store, now: Clock) -> None:
        self._store = store
        self._now = now
        self._kept: set[str] = set()  # questions with a draft in the store, to drop once answered

    def text(self, question_id: str) -> str:
        """The answer typed earlier and not handed in ("" when none)."""
        text = self._store.draft(question_id)
        if text:
            self._kept.add(question_id)
        return text

    def seed(self, question_id: str) -> int | None:
        """The seed of the numbers a draft was typed for; None when there is none."""
        try:
            return self._store.draft_seed(question_id)
        except StoreError:
            return None  # fresh numbers; the draft itself is read (and its error said) on screen

    def shown(self, question: Question) -> dict[str, Any]:
        """The Showing fields a draft gives `question` besides its text: how its choices were
        ordered and picked, its rubric's ticks ({} when none, or unreadable)."""
        try:
            fields = shown_with(question, self._store.draft_marks(question.id))
        except StoreError:
            return {}  # asked afresh
        if fields:
            self._kept.add(question.id)
        return fields

    def keep(self, showing: Showing, text: str, picked: frozenset[int] = frozenset()) -> None:
        """Keep what is typed (and `picked`) to the question shown, with its numbers' seed."""
        self._save(showing, text, marks_of(showing, picked))

    def put_back(self, feedback: Feedback) -> None:
        """An answer taken back (undone) becomes its question's draft again, with the seed of its
        numbers, its choices' order and picks, its rubric ticks: it is asked as it was with all that
        was entered, after a restart too. Failing that, it is entered again."""
        marks: Marks | None = None
        text = feedback.response
        if isinstance(feedback.question, ChoiceQuestion):  # its order kept even with nothing picked
            text, marks = "", choice_marks(feedback.showing.choice_order, feedback.picked)
        elif feedback.response and feedback.rubric_met:
            marks = tick_marks(feedback.rubric_met)
        try:
            self._save(feedback.showing, text, marks)
        except StoreError:
            pass  # the answer is taken back all the same

    def _save(self, showing: Showing, text: str, marks: Marks | None) -> None:
        drawn = showing.draw
        self._store.save_draft(showing.question.id, text, self._now(), drawn.seed if drawn is not None else None,
                               json.dumps(marks) if marks else "")
        self._kept.add(showing.question.id)

    def keep_ticks(self, question_id: str, ticks: Sequence[bool]) -> None:
        """The ticks of a rubric left for later (its answer is saved), to open it with next time;
        a draft typed meanwhile for a new answer keeps its text."""
        marks = json.dumps(tick_marks(ticks)) if any(ticks) else ""
        self._store.save_draft(question_id, self._store.draft(question_id), self._now(), None, marks)

    def forget_ticks(self, question_id: str) -> None:
        """Once the rubric is assessed, the ticks kept for it go (a text typed meanwhile stays)."""
        self.keep_ticks(question_id, ())

    def drop(self, question_id: str) -> None:
        """Once its answer is saved, a question's draft goes."""
        if question_id not in self._kept:
            return
        self._kept.discard(question_id)
        try:
            self._store.save_draft(question_id, "", self._now())
        except StoreError:
            pass  # the answer itself is saved; the stale draft would only come back as text to edit
