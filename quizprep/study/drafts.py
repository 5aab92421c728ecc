"""Answers being typed, kept in the progress store so that closing the app loses none of them."""
from __future__ import annotations

from quizprep.study.clock import Clock
from quizprep.study.store import Store, StoreError


class Drafts:
    """One session's drafts: read back, kept while the learner types, dropped once answered."""

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

    def keep(self, question_id: str, text: str, seed: int | None) -> None:
        self._store.save_draft(question_id, text, self._now(), seed)
        self._kept.add(question_id)

    def put_back(self, question_id: str, text: str, seed: int | None) -> None:
        """An answer taken back (undone) becomes its question's draft again, with the seed of its
        numbers, so that it is asked as it was with the text typed; failing that, it is typed again."""
        try:
            self.keep(question_id, text, seed)
        except StoreError:
            pass  # the answer is taken back all the same

    def drop(self, question_id: str) -> None:
        """Once its answer is saved, a question's draft goes (a choice question never has one)."""
        if question_id not in self._kept:
            return
        self._kept.discard(question_id)
        try:
            self._store.save_draft(question_id, "", self._now())
        except StoreError:
            pass  # the answer itself is saved; the stale draft would only come back as text to edit
