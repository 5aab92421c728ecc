"""Progress in SQLite: every answer, every rubric self-assessment and one FSRS card per question.

Durability rules:
- WAL mode with `synchronous=FULL`: a write that returned is on disk, even if the process is
  killed the next instant or the machine loses power.
- Each answer is one short `BEGIN IMMEDIATE` transaction that also updates the question's FSRS
  card, so two app instances on one file serialise their writes instead of interleaving a
  read-modify-write of the same card. `busy_timeout` makes the other instance wait, not fail.
- A file that is not a readable database, or one written by a newer quizprep, is renamed
  beside itself with a timestamp and a fresh database is started; `Store.notices` says where.
"""
from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Sequence

if TYPE_CHECKING:
    from fsrs import Card, Rating, Scheduler

DB_ENV = "QUIZPREP_DB"
DB_FILENAME = "progress.sqlite3"
BUSY_TIMEOUT_MS = 10_000

# MIGRATIONS[v] brings a database from schema version v to v + 1 (PRAGMA user_version).
# Append to this list; never edit a migration that has shipped.
MIGRATIONS: list[tuple[str, ...]] = [
    (
        """CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            mode TEXT NOT NULL,
            topics TEXT NOT NULL,
            started_at TEXT NOT NULL,
            ended_at TEXT
        )""",
        """CREATE TABLE answers (
            id INTEGER PRIMARY KEY,
            session_id INTEGER REFERENCES sessions(id),
            question_id TEXT NOT NULL,
            topic TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('choice', 'numeric', 'free')),
            mode TEXT NOT NULL,
            answered_at TEXT NOT NULL,
            elapsed_s REAL NOT NULL,
            response TEXT NOT NULL,
            seed INTEGER,
            correct INTEGER,
            score REAL,
            rating INTEGER,
            assessed_at TEXT
        )""",
        "CREATE INDEX answers_by_question ON answers (question_id, answered_at)",
        "CREATE INDEX answers_by_time ON answers (answered_at)",
        """CREATE TABLE rubric_marks (
            answer_id INTEGER NOT NULL REFERENCES answers(id),
            item INTEGER NOT NULL,
            criterion TEXT NOT NULL,
            weight REAL NOT NULL,
            met INTEGER NOT NULL,
            PRIMARY KEY (answer_id, item)
        )""",
        """CREATE TABLE cards (
            question_id TEXT PRIMARY KEY,
            card TEXT NOT NULL,
            due TEXT NOT NULL,
            reviewed_at TEXT NOT NULL
        )""",
        "CREATE INDEX cards_by_due ON cards (due)",
    ),
]
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(RuntimeError):
    """The progress database cannot be opened or written; the message says why and where."""


class _Unusable(Exception):
    def __init__(self, tag: str, reason: str) -> None:
        super().__init__(reason)
        self.tag = tag
        self.reason = reason


@dataclass(frozen=True)
class Answer:
    """One committed answer. `score` is 0..1 (None while a free response awaits its rubric)."""

    id: int
    session_id: int | None
    question_id: str
    topic: str
    kind: str
    mode: str
    answered_at: datetime
    elapsed_s: float
    response: str
    seed: int | None
    correct: bool | None
    score: float | None
    rating: int | None
    assessed_at: datetime | None

    @property
    def assessed(self) -> bool:
        return self.score is not None


@dataclass(frozen=True)
class RubricMark:
    answer_id: int
    item: int
    criterion: str
    weight: float
    met: bool


def default_db_path() -> Path:
    """`$QUIZPREP_DB` when set, else progress.sqlite3 in the user's data directory."""
    import os

    if os.environ.get(DB_ENV):
        return Path(os.environ[DB_ENV]).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("quizprep", appauthor=False)) / DB_FILENAME


def resolve_db_path(explicit: str | Path | None = None) -> Path:
    """The database for a `--db` option: the option if given, else `default_db_path()`."""
    return Path(explicit).expanduser() if explicit else default_db_path()


def to_text(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("times must be timezone-aware")
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def from_text(text: str) -> datetime:
    return datetime.fromisoformat(text)


class Store:
    """An open progress database. Use `Store.open(path)`; close it (or use `with`)."""

    def __init__(self, connection: sqlite3.Connection, path: Path, scheduler: Scheduler,
                 notices: Sequence[str] = ()) -> None:
        self._db = connection
        self._lock = threading.Lock()
        self.path = path
        self.scheduler = scheduler
        self.notices: tuple[str, ...] = tuple(notices)

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path | None = None, *, scheduler: Scheduler | None = None) -> Store:
        """Open (creating or migrating) the database at `path` (default: `resolve_db_path()`)."""
        from quizprep.study.scheduling import make_scheduler

        path = resolve_db_path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(f"cannot create the folder for {path}: {error.strerror or error}") from error
        notices = []
        try:
            connection = _connect_checked(path)
        except _Unusable as problem:
            moved = _move_aside(path, problem.tag)
            notices.append(f"{path} {problem.reason}; it was moved to {moved} and a new, empty "
                           f"progress database was started.")
            connection = _connect_checked(path)
        return cls(connection, path, scheduler or make_scheduler(), notices)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as error:
                raise StoreError(f"could not save to {self.path}: {error}; nothing was written") from error
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException as error:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(error, sqlite3.Error):
                    raise StoreError(f"could not save to {self.path}: {error}; nothing was written") from error
                raise

    def _read(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    # -- writing ---------------------------------------------------------------------------

    def start_session(self, mode: str, topics: Sequence[str], now: datetime) -> int:
        with self._write() as db:
            cursor = db.execute("INSERT INTO sessions (mode, topics, started_at) VALUES (?, ?, ?)",
                                (mode, ",".join(topics), to_text(now)))
            return int(cursor.lastrowid)

    def end_session(self, session_id: int, now: datetime) -> None:
        with self._write() as db:
            db.execute("UPDATE sessions SET ended_at = ? WHERE id = ?", (to_text(now), session_id))

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
            card = None if rating is None else self._review(db, question_id, rating, answered_at)
            return int(cursor.lastrowid), card

    def record_assessment(self, answer_id: int, marks: Sequence[tuple[str, float, bool]], *,
                          score: float, correct: bool, rating: Rating, assessed_at: datetime) -> Card:
        """Commit a rubric self-assessment of answer `answer_id` and review its card.

        `marks` holds (criterion, weight, met) in rubric order. Assessing twice is refused."""
        with self._write() as db:
            row = db.execute("SELECT question_id, score FROM answers WHERE id = ?", (answer_id,)).fetchone()
            if row is None:
                raise StoreError(f"no answer with id {answer_id}")
            if row[1] is not None:
                raise StoreError(f"answer {answer_id} has already been assessed")
            db.executemany(
                "INSERT INTO rubric_marks (answer_id, item, criterion, weight, met) VALUES (?, ?, ?, ?, ?)",
                [(answer_id, i, criterion, float(weight), int(met))
                 for i, (criterion, weight, met) in enumerate(marks)],
            )
            db.execute("UPDATE answers SET score = ?, correct = ?, rating = ?, assessed_at = ? WHERE id = ?",
                       (score, int(correct), int(rating), to_text(assessed_at), answer_id))
            return self._review(db, row[0], rating, assessed_at)

    def _review(self, db: sqlite3.Connection, question_id: str, rating: Rating, now: datetime) -> Card:
        from quizprep.study.scheduling import review

        row = db.execute("SELECT card FROM cards WHERE question_id = ?", (question_id,)).fetchone()
        card = review(self.scheduler, _card(row[0]) if row else None, question_id, rating, now)
        db.execute(
            """INSERT INTO cards (question_id, card, due, reviewed_at) VALUES (?, ?, ?, ?)
               ON CONFLICT (question_id) DO UPDATE SET card = excluded.card, due = excluded.due,
                   reviewed_at = excluded.reviewed_at""",
            (question_id, card.to_json(), to_text(card.due), to_text(now)),
        )
        return card

    # -- reading ---------------------------------------------------------------------------

    def card(self, question_id: str) -> Card | None:
        rows = self._read("SELECT card FROM cards WHERE question_id = ?", (question_id,))
        return _card(rows[0][0]) if rows else None

    def cards(self) -> dict[str, Card]:
        return {qid: _card(text) for qid, text in self._read("SELECT question_id, card FROM cards")}

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
        rows = self._read(f"SELECT {_ANSWER_COLUMNS} FROM answers {where} ORDER BY answered_at, id", params)
        return [_answer(row) for row in rows]

    def answer(self, answer_id: int) -> Answer | None:
        rows = self._read(f"SELECT {_ANSWER_COLUMNS} FROM answers WHERE id = ?", (answer_id,))
        return _answer(rows[0]) if rows else None

    def unassessed(self) -> list[Answer]:
        """Free responses committed without a self-assessment (e.g. the app was closed first)."""
        rows = self._read(f"SELECT {_ANSWER_COLUMNS} FROM answers WHERE kind = 'free' AND score IS NULL "
                          "ORDER BY answered_at, id")
        return [_answer(row) for row in rows]

    def topic_scores(self) -> dict[str, tuple[int, float | None]]:
        """Per topic with any answer: how many answers are assessed, and their mean score."""
        rows = self._read("SELECT topic, COUNT(score), AVG(score) FROM answers GROUP BY topic")
        return {topic: (count, mean) for topic, count, mean in rows}

    def latest_correct(self) -> dict[str, bool]:
        """Per question: whether its latest assessed answer was right."""
        rows = self._read("SELECT question_id, correct FROM answers WHERE score IS NOT NULL "
                          "ORDER BY answered_at, id")
        return {question_id: bool(correct) for question_id, correct in rows}  # the latest wins

    def rubric_marks(self, answer_id: int | None = None) -> list[RubricMark]:
        where, params = ("WHERE answer_id = ?", (answer_id,)) if answer_id is not None else ("", ())
        rows = self._read(f"SELECT answer_id, item, criterion, weight, met FROM rubric_marks {where} "
                          "ORDER BY answer_id, item", params)
        return [RubricMark(a, i, c, w, bool(m)) for a, i, c, w, m in rows]

    def schema_version(self) -> int:
        return int(self._read("PRAGMA user_version")[0][0])


_ANSWER_COLUMNS = ("id, session_id, question_id, topic, kind, mode, answered_at, elapsed_s, response, "
                   "seed, correct, score, rating, assessed_at")


def _answer(row: tuple) -> Answer:
    (id_, session_id, question_id, topic, kind, mode, answered_at, elapsed_s, response, seed,
     correct, score, rating, assessed_at) = row
    return Answer(id_, session_id, question_id, topic, kind, mode, from_text(answered_at), elapsed_s,
                  response, seed, None if correct is None else bool(correct), score, rating,
                  None if assessed_at is None else from_text(assessed_at))


def _card(text: str) -> Card:
    from fsrs import Card

    return Card.from_json(text)


def _connect_checked(path: Path) -> sqlite3.Connection:
    """Connect, check the file is a healthy database of a version we know, migrate it."""
    try:
        connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                     check_same_thread=False)
    except sqlite3.Error as error:
        raise StoreError(f"cannot open the progress database {path}: {error}") from error
    try:
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        _refuse_newer(version)
        problems = [row[0] for row in connection.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            raise _Unusable("corrupt", f"is damaged ({problems[0]})")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = FULL")
        connection.execute("PRAGMA foreign_keys = ON")
        _migrate(connection)
    except _Unusable:
        connection.close()
        raise
    except sqlite3.OperationalError as error:
        connection.close()
        raise StoreError(f"cannot open the progress database {path}: {error}") from error
    except sqlite3.DatabaseError as error:
        connection.close()
        raise _Unusable("corrupt", f"is not a readable SQLite database ({error})") from error
    return connection


def _refuse_newer(version: int) -> None:
    if version > SCHEMA_VERSION:
        raise _Unusable(f"v{version}", f"was written by a newer quizprep (schema version {version}; "
                                       f"this one knows up to {SCHEMA_VERSION})")


def _migrate(connection: sqlite3.Connection) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        # Read again under the write lock: another instance may have migrated meanwhile.
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        _refuse_newer(version)
        for target in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[target - 1]:
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {target}")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _move_aside(path: Path, tag: str) -> Path:
    """Rename the database (and its -wal/-shm files) to NAME.TAG-YYYYMMDDTHHMMSSZ, never overwriting."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.{tag}-{stamp}")
    counter = 1
    while any(Path(f"{target}{suffix}").exists() for suffix in ("", "-wal", "-shm")):
        counter += 1
        target = path.with_name(f"{path.name}.{tag}-{stamp}-{counter}")
    try:
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{path}{suffix}")
            if source.exists():
                source.rename(f"{target}{suffix}")
    except OSError as error:
        raise StoreError(f"{path} is unusable and could not be moved aside: {error}") from error
    return target
