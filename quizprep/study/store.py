"""Progress in SQLite: every answer, every rubric self-assessment and one FSRS card per question.

Durability rules:
- WAL mode with `synchronous=FULL`: a write that returned is on disk, even if the process is
  killed the next instant or the machine loses power.
- Each answer is one short `BEGIN IMMEDIATE` transaction that also updates the question's FSRS
  card, so two app instances on one file serialise their writes instead of interleaving a
  read-modify-write of the same card. `busy_timeout` makes the other instance wait, not fail;
  past it a write raises StoreBusy, and nothing was written.
- Which files are opened, refused or moved aside: `quizprep.study.storefile`; where the file is
  by default: `quizprep.study.dbpath`. A read-only open works on a snapshot in memory and never
  writes to the file.
- The FSRS cards are reviewed, rebuilt from the history and saved by `quizprep.study.cards`,
  inside the transaction of the answer or grade that moves them.
- Rows that a damaged disk garbled are found when the store opens (`quizprep.study.rows`), set
  aside in damaged_* tables and reported in `Store.notices`; a card set aside is rebuilt from
  the question's answers. No read ever fails on a garbled row.
"""
from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Collection, Iterator, Mapping, Sequence

from quizprep.study.cards import rebuild_card, review_card, save_card
from quizprep.study.dbpath import DB_ENV, resolve_db_path
from quizprep.study.rows import (
    ANSWER_COLUMNS, CARD_COLUMNS, GRADE_COLUMNS, MARK_COLUMNS, SCHEDULE_COLUMNS, Answer, Grade, RubricMark,
    Schedule, answer_from_row, card_from_row, damage_notice, decoded, describe, find_damage, grade_from_row,
    mark_from_row, schedule_from_row, set_aside, text_factory, to_text,
)
from quizprep.study.storefile import StoreBusy, StoreError, connect, failure

if TYPE_CHECKING:
    from fsrs import Card, Rating, Scheduler

__all__ = ["Answer", "RubricMark", "Store", "StoreBusy", "StoreError"]

BUSY_TIMEOUT_S = 10.0


def _inserted_id(cursor: sqlite3.Cursor) -> int:
    """The id SQLite gave the row an INSERT just wrote."""
    assert cursor.lastrowid is not None  # set by every INSERT
    return cursor.lastrowid


class Store:
    """An open progress database. Use `Store.open(path)`; close it (or use `with`)."""

    def __init__(self, connection: sqlite3.Connection, path: Path, scheduler: Scheduler,
                 notices: Sequence[str] = (), readonly: bool = False) -> None:
        self._db = connection
        self._db.text_factory = text_factory  # text that is not UTF-8 reaches the row checks
        self._lock = threading.Lock()
        self.path = path
        self.scheduler = scheduler
        self.notices: tuple[str, ...] = tuple(notices)
        self.readonly = readonly

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path | None = None, *, scheduler: Scheduler | None = None,
             readonly: bool = False, busy_timeout_s: float = BUSY_TIMEOUT_S, check_rows: bool = True) -> Store:
        """Open the database at `path` (default: `resolve_db_path()`), creating or migrating it.

        `readonly`: never write to the file (a missing one reads as empty); for commands that
        only report. `check_rows=False` leaves `check_rows()` to the caller (the quiz app runs
        it once its first screen is up). Raises StoreError, its message ready to show, when the
        database cannot be opened."""
        from quizprep.study.scheduling import make_scheduler

        owned = path is None and not os.environ.get(DB_ENV)
        path = resolve_db_path(path)
        if not readonly:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StoreError(f"cannot create the folder for {path}: {error.strerror or error}") from error
        connection, notices = connect(path, owned=owned, readonly=readonly, busy_timeout_s=busy_timeout_s)
        store = cls(connection, path, scheduler or make_scheduler(), notices, readonly)
        if check_rows:
            try:
                store.check_rows()
            except BaseException:
                store.close()
                raise
        return store

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def check_rows(self) -> tuple[str, ...]:
        """Find rows that no longer decode, set them aside (rebuilding the cards among them from
        the answers) and return the notices saying so, which are also added to `notices`."""
        with self._lock:
            try:
                damage = find_damage(self._db)
            except sqlite3.Error as error:
                raise StoreError(f"could not read {self.path}: {error}") from error
        if not damage:
            return ()
        try:
            with self._write() as db:
                lost_cards = set_aside(db, damage, to_text(datetime.now(timezone.utc)))
                rebuilt = [qid for qid in lost_cards if rebuild_card(db, self.scheduler, qid) is not None]
        except StoreError as error:
            notice = (f"{describe(damage)} in {self.path} could not be read and are skipped; setting them "
                      f"aside failed ({error}).")
            self.notices += (notice,)
            return (notice,)
        notice = damage_notice(damage, self.path, readonly=self.readonly, rebuilt=rebuilt)
        self.notices += (notice,)
        return (notice,)

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as error:
                raise failure(self.path, "could not save to", error) from error
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException as error:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(error, sqlite3.Error):
                    raise failure(self.path, "could not save to", error) from error
                raise

    def _read(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as error:
                raise StoreError(f"could not read {self.path}: {error}") from error

    # -- writing ---------------------------------------------------------------------------

    def start_session(self, mode: str, topics: Sequence[str], now: datetime) -> int:
        with self._write() as db:
            cursor = db.execute("INSERT INTO sessions (mode, topics, started_at) VALUES (?, ?, ?)",
                                (mode, ",".join(topics), to_text(now)))
            return _inserted_id(cursor)

    def end_session(self, session_id: int, now: datetime, planned: int | None = None) -> None:
        """Close a session; `planned` is a mock round's questions, answered or not."""
        with self._write() as db:
            db.execute("UPDATE sessions SET ended_at = ?, planned = ? WHERE id = ?",
                       (to_text(now), planned, session_id))

    def planned_questions(self) -> dict[int, int]:
        """The questions of each mock round that was ended, answered or not, by session id."""
        return dict(self._read("SELECT id, planned FROM sessions WHERE planned IS NOT NULL"))

    def record_answer(self, *, question_id: str, topic: str, kind: str, mode: str, response: str,
                      elapsed_s: float, answered_at: datetime, seed: int | None = None,
                      correct: bool | None = None, score: float | None = None,
                      rating: Rating | None = None, session_id: int | None = None,
                      ) -> tuple[int, Card | None]:
        """Commit one answer; with a `rating`, review the question's card in the same transaction.

        Returns the answer's id and the updated card (None when no rating was given, as for a
        free response that still awaits its self-assessment)."""
        with self._write() as db:
            cursor = db.execute(
                """INSERT INTO answers (session_id, question_id, topic, kind, mode, answered_at,
                       elapsed_s, response, seed, correct, score, rating, assessed_at)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (session_id, question_id, topic, kind, mode, to_text(answered_at), float(elapsed_s),
                 response, seed, None if correct is None else int(correct), score,
                 None if rating is None else int(rating),
                 None if score is None else to_text(answered_at)),
            )
            card = None if rating is None else review_card(db, self.scheduler, question_id, rating, answered_at)
            return _inserted_id(cursor), card

    def record_assessment(self, answer_id: int, marks: Sequence[tuple[str, float, bool]], *,
                          score: float, correct: bool, rating: Rating | None, assessed_at: datetime,
                          ) -> Card | None:
        """Commit a rubric self-assessment of answer `answer_id` and review its card with `rating`
        (None, as in cram mode: the schedule is left alone and None is returned).

        `marks` holds (criterion, weight, met) in rubric order. Assessing twice is refused."""
        with self._write() as db:
            row = db.execute("SELECT question_id, score FROM answers WHERE id = ?", (answer_id,)).fetchone()
            if row is None:
                raise StoreError(f"no answer with id {answer_id}")
            if row[1] is not None:
                raise StoreError(f"answer {answer_id} has already been assessed")
            self._mark(db, answer_id, marks, score, correct, rating)
            db.execute("UPDATE answers SET assessed_at = ? WHERE id = ?", (to_text(assessed_at), answer_id))
            return None if rating is None else review_card(db, self.scheduler, row[0], rating, assessed_at)

    def reassess(self, answer_id: int, marks: Sequence[tuple[str, float, bool]], *,
                 score: float, correct: bool, rating: Rating | None) -> Card | None:
        """Replace the rubric marks of an assessed answer and rebuild its question's card from
        every rated answer, this one with its new rating at its original time. Returns the card;
        with `rating` None (a crammed answer) the card is left as it is and None is returned."""
        with self._write() as db:
            row = db.execute("SELECT question_id, score FROM answers WHERE id = ?", (answer_id,)).fetchone()
            if row is None or row[1] is None:
                raise StoreError(f"answer {answer_id} has not been assessed yet")
            db.execute("DELETE FROM rubric_marks WHERE answer_id = ?", (answer_id,))
            self._mark(db, answer_id, marks, score, correct, rating)
            return None if rating is None else rebuild_card(db, self.scheduler, row[0])

    def rerate(self, answer_id: int, rating: Rating) -> Card | None:
        """Give an answer another rating (the learner's override) and rebuild its question's card
        from every rated answer, as `reassess` does. Returns the card."""
        with self._write() as db:
            question_id = self._question_of(db, answer_id)
            db.execute("UPDATE answers SET rating = ? WHERE id = ?", (int(rating), answer_id))
            return rebuild_card(db, self.scheduler, question_id)

    def remove_answer(self, answer_id: int) -> Card | None:
        """Take an answer back (undo): it and its rubric marks are deleted and its question's card
        is rebuilt from the answers left; a question with none left has no card again."""
        with self._write() as db:
            question_id = self._question_of(db, answer_id)
            db.execute("DELETE FROM rubric_marks WHERE answer_id = ?", (answer_id,))
            db.execute("DELETE FROM answers WHERE id = ?", (answer_id,))
            card = rebuild_card(db, self.scheduler, question_id)
            if card is None:
                db.execute("DELETE FROM cards WHERE question_id = ?", (question_id,))
            return card

    @staticmethod
    def _question_of(db: sqlite3.Connection, answer_id: int) -> str:
        row = db.execute("SELECT question_id FROM answers WHERE id = ?", (answer_id,)).fetchone()
        if row is None:
            raise StoreError(f"no answer with id {answer_id}")
        return str(row[0])

    @staticmethod
    def _mark(db: sqlite3.Connection, answer_id: int, marks: Sequence[tuple[str, float, bool]],
              score: float, correct: bool, rating: Rating | None) -> None:
        db.executemany(
            f"INSERT INTO rubric_marks ({MARK_COLUMNS}) VALUES (?, ?, ?, ?, ?)",
            [(answer_id, i, criterion, float(weight), int(met)) for i, (criterion, weight, met) in enumerate(marks)],
        )
        db.execute("UPDATE answers SET score = ?, correct = ?, rating = ? WHERE id = ?",
                   (score, int(correct), None if rating is None else int(rating), answer_id))

    def record_grade(self, *, exercise: str, file: str, graded_at: datetime, score: float, passed: bool,
                     diagnoses: str, lessons: Sequence[str], rating: Rating) -> tuple[int, dict[str, Card]]:
        """Commit one exercise grade and review each of `lessons` with `rating`, in one transaction.

        `diagnoses` is the JSON of the named mistakes (`quizprep.study.grades` writes it). Returns
        the grade's id and the updated cards."""
        import json

        from quizprep.study.scheduling import due_now_after_lapse

        with self._write() as db:
            cursor = db.execute(
                f"INSERT INTO grades ({GRADE_COLUMNS}) VALUES (NULL, ?, ?, ?, ?, ?, ?, ?)",
                (exercise, file, to_text(graded_at), float(score), int(passed), diagnoses, json.dumps(list(lessons))),
            )
            cards = {}
            for question_id in lessons:
                card = review_card(db, self.scheduler, question_id, rating, graded_at)
                cards[question_id] = save_card(db, question_id, due_now_after_lapse(card, rating, graded_at), graded_at)
            return _inserted_id(cursor), cards

    def set_setting(self, key: str, value: str) -> None:
        """Remember a small setting (e.g. "interview" -> "2026-12-15") across runs."""
        with self._write() as db:
            db.execute("INSERT INTO settings (key, value) VALUES (?, ?) "
                       "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    def save_draft(self, question_id: str, text: str, now: datetime, seed: int | None = None,
                   marks: str = "") -> None:
        """Keep the answer being given to `question_id`: the text typed, the seed of its numbers
        and its `marks` (JSON: a choice's order and picks, rubric ticks); neither text nor marks drops it."""
        with self._write() as db:
            if text or marks:
                db.execute("INSERT INTO drafts (question_id, text, saved_at, seed, marks) VALUES (?, ?, ?, ?, ?) "
                           "ON CONFLICT (question_id) DO UPDATE SET text = excluded.text, "
                           "saved_at = excluded.saved_at, seed = excluded.seed, marks = excluded.marks",
                           (question_id, text, to_text(now), seed, marks or None))
            else:
                db.execute("DELETE FROM drafts WHERE question_id = ?", (question_id,))

    # -- reading ---------------------------------------------------------------------------

    def setting(self, key: str) -> str | None:
        """A setting saved with `set_setting`; None when never set (or garbled on disk)."""
        rows = self._read("SELECT value FROM settings WHERE key = ?", (key,))
        return rows[0][0] if rows and type(rows[0][0]) is str else None

    def adopt_merged(self, merged: Mapping[str, tuple[str, str]]) -> list[str]:
        """Move the answers of merged-away question ids (old id -> (kept id, its topic)) onto the
        question that absorbed them and rebuild its card, so that a bank merge loses no history.
        Returns the old ids that had answers; reads only, when none has."""
        if not merged:
            return []
        marks = ", ".join("?" * len(merged))
        found = [row[0] for row in self._read(
            f"SELECT DISTINCT question_id FROM answers WHERE question_id IN ({marks})", tuple(merged))]
        if not found:
            return []
        with self._write() as db:
            for old in found:
                kept, topic = merged[old]
                db.execute("UPDATE answers SET question_id = ?, topic = ? WHERE question_id = ?", (kept, topic, old))
                db.execute("DELETE FROM cards WHERE question_id = ?", (old,))
                db.execute("DELETE FROM drafts WHERE question_id = ?", (old,))
                rebuild_card(db, self.scheduler, kept)
        return sorted(found)

    def draft(self, question_id: str) -> str:
        """The draft saved with `save_draft`; "" when there is none (or it is garbled on disk)."""
        rows = self._read("SELECT text FROM drafts WHERE question_id = ?", (question_id,))
        return rows[0][0] if rows and type(rows[0][0]) is str else ""

    def draft_seed(self, question_id: str) -> int | None:
        """The seed saved with a draft; None when there is none (or it is garbled on disk)."""
        rows = self._read("SELECT seed FROM drafts WHERE question_id = ?", (question_id,))
        return rows[0][0] if rows and type(rows[0][0]) is int else None

    def draft_marks(self, question_id: str) -> str:
        """The marks saved with a draft; "" when there are none (or they are garbled on disk)."""
        rows = self._read("SELECT marks FROM drafts WHERE question_id = ?", (question_id,))
        return rows[0][0] if rows and type(rows[0][0]) is str else ""

    def card(self, question_id: str) -> Card | None:
        rows = self._read(f"SELECT {CARD_COLUMNS} FROM cards WHERE question_id = ?", (question_id,))
        return next((card for _, card in decoded(rows, card_from_row)), None)

    def cards(self) -> dict[str, Card]:
        return dict(decoded(self._read(f"SELECT {CARD_COLUMNS} FROM cards"), card_from_row))

    def schedules(self) -> dict[str, Schedule]:
        """Per card, its due date and what its retrievability depends on: cheaper than `cards` where
        SQLite has its JSON functions (built in from 3.38), from the whole cards where it has not."""
        try:
            return dict(decoded(self._read(f"SELECT {SCHEDULE_COLUMNS} FROM cards"), schedule_from_row))
        except StoreError as error:
            if "no such function" not in str(error.__cause__):
                raise
        return {question_id: Schedule(card.due, card.stability, card.last_review)
                for question_id, card in self.cards().items()}

    def answers(self, *, question_id: str | None = None, session_id: int | None = None,
                since: datetime | None = None) -> list[Answer]:
        """Answers in the order they were given, optionally filtered."""
        clauses, params = [], []
        for clause, value in (("question_id = ?", question_id), ("session_id = ?", session_id),
                              ("answered_at >= ?", None if since is None else to_text(since))):
            if value is not None:
                clauses.append(clause)
                params.append(value)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._read(f"SELECT {ANSWER_COLUMNS} FROM answers {where} ORDER BY answered_at, id", params)
        return decoded(rows, answer_from_row)

    def answer(self, answer_id: int) -> Answer | None:
        rows = self._read(f"SELECT {ANSWER_COLUMNS} FROM answers WHERE id = ?", (answer_id,))
        return next(iter(decoded(rows, answer_from_row)), None)

    def unassessed(self) -> list[Answer]:
        """Free responses committed without a self-assessment (e.g. the app was closed first)."""
        rows = self._read(f"SELECT {ANSWER_COLUMNS} FROM answers WHERE kind = 'free' AND score IS NULL "
                          "ORDER BY answered_at, id")
        return decoded(rows, answer_from_row)

    def topic_scores(self, question_ids: Collection[str] | None = None) -> dict[str, tuple[int, float | None]]:
        """Per topic with any answer: how many answers are assessed, and their mean score; only
        the answers to `question_ids` when given."""
        ids = None if question_ids is None else list(question_ids)
        where = f"WHERE question_id IN ({', '.join('?' * len(ids))})" if ids is not None else ""
        rows = self._read(f"SELECT topic, COUNT(score), AVG(score) FROM answers {where} GROUP BY topic", ids or ())
        return {topic: (count, mean) for topic, count, mean in rows if type(topic) is str}

    def answered_ids(self) -> set[str]:
        """The questions answered at least once (an exercise grade alone answers none)."""
        return {qid for (qid,) in self._read("SELECT DISTINCT question_id FROM answers") if type(qid) is str}

    def latest_correct(self) -> dict[str, bool]:
        """Per question: whether its latest assessed answer was right."""
        rows = self._read("SELECT question_id, correct FROM answers WHERE score IS NOT NULL "
                          "ORDER BY answered_at, id")
        # the latest wins
        return {question_id: bool(correct) for question_id, correct in rows if type(question_id) is str}

    def rubric_marks(self, answer_id: int | None = None) -> list[RubricMark]:
        where, params = ("WHERE answer_id = ?", (answer_id,)) if answer_id is not None else ("", ())
        rows = self._read(f"SELECT {MARK_COLUMNS} FROM rubric_marks {where} ORDER BY answer_id, item", params)
        return decoded(rows, mark_from_row)

    def grades(self) -> list[Grade]:
        """Every recorded exercise grade, oldest first."""
        return decoded(self._read(f"SELECT {GRADE_COLUMNS} FROM grades ORDER BY graded_at, id"), grade_from_row)

    def schema_version(self) -> int:
        return int(self._read("PRAGMA user_version")[0][0])
