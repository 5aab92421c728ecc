"""Opening the progress database file: whose it is, whether it is healthy, which schema it has.

- A missing or empty file becomes a new database; a read-only open creates nothing.
- A quizprep database (marked with APPLICATION_ID in its SQLite header, or, from before the
  mark, holding quizprep's tables) that is damaged or was written by a newer quizprep is renamed
  beside itself with a timestamp and a fresh one is started, holding whatever rows of a damaged
  one still read (`quizprep.study.salvage`); the notice says where the file went.
- Any other file is refused with a message and left as it is: a typo such as `--db notes.md`
  must never move a learner's file. The default path is the exception: only quizprep writes
  there, so whatever is found there is a damaged quizprep database.
- A read-only open (`quizprep stats`, `report`) never writes to the file and takes no lock
  that a writer must wait for: it copies a snapshot into memory and works on that.
"""
from __future__ import annotations

import errno
import os
import sqlite3
import stat
from datetime import datetime, timezone
from pathlib import Path
from typing import NoReturn

APPLICATION_ID = 0x51505250  # "QPRP", written at offset 68 of the SQLite header
SQLITE_MAGIC = b"SQLite format 3\x00"
OUR_TABLES = frozenset({"sessions", "answers", "rubric_marks", "cards"})
_ANSWER_DEFINITION = """(
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
        )"""

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
        f"CREATE TABLE answers {_ANSWER_DEFINITION}",
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
    (  # 2: the header mark, and tables that keep rows found damaged, byte for byte
        f"PRAGMA application_id = {APPLICATION_ID}",
        "CREATE TABLE damaged_answers (id, session_id, question_id, topic, kind, mode, answered_at, "
        "elapsed_s, response, seed, correct, score, rating, assessed_at, reason TEXT, found_at TEXT)",
        "CREATE TABLE damaged_rubric_marks (answer_id, item, criterion, weight, met, reason TEXT, found_at TEXT)",
        "CREATE TABLE damaged_cards (question_id, card, due, reviewed_at, reason TEXT, found_at TEXT)",
    ),
    (  # 3: `quizprep grade` results; diagnoses and lessons are JSON lists
        """CREATE TABLE grades (
            id INTEGER PRIMARY KEY,
            exercise TEXT NOT NULL,
            file TEXT NOT NULL,
            graded_at TEXT NOT NULL,
            score REAL NOT NULL,
            passed INTEGER NOT NULL,
            diagnoses TEXT NOT NULL,
            lessons TEXT NOT NULL
        )""",
        "CREATE INDEX grades_by_time ON grades (graded_at)",
        "CREATE TABLE damaged_grades (id, exercise, file, graded_at, score, passed, diagnoses, lessons, "
        "reason TEXT, found_at TEXT)",
    ),
    (  # 4: small settings the learner chose (interview date, theme)
        "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ),
    (  # 5: a free or numeric answer being typed, kept until it is handed in
        "CREATE TABLE drafts (question_id TEXT PRIMARY KEY, text TEXT NOT NULL, saved_at TEXT NOT NULL)",
    ),
    (  # 6: the seed of the numbers a numeric draft was typed for, so they come back with it
        "ALTER TABLE drafts ADD COLUMN seed INTEGER",
    ),
    (  # 7: what else a draft holds, as JSON: a choice's order and picks, a free answer's rubric ticks
        "ALTER TABLE drafts ADD COLUMN marks TEXT",
    ),
    (  # 8: a mock round's questions, answered or not, so that one ended early is scored over all of them
        "ALTER TABLE sessions ADD COLUMN planned INTEGER",
    ),
]
SCHEMA_VERSION = len(MIGRATIONS)
SQLITE_BUSY, SQLITE_LOCKED, SQLITE_FULL = 5, 6, 13
ROW_PROBLEMS = ("CHECK constraint failed in ", "NULL value in ")  # as PRAGMA quick_check words them


class StoreError(RuntimeError):
    """The progress database cannot be opened or written; the message says why and what to do."""


class StoreBusy(StoreError):
    """Another program held the database's write lock for longer than the wait; nothing was
    written and the same call may simply be tried again."""


class _Unusable(Exception):
    def __init__(self, tag: str, reason: str) -> None:
        super().__init__(reason)
        self.tag = tag
        self.reason = reason


def connect(path: Path, *, owned: bool, readonly: bool, busy_timeout_s: float,
            ) -> tuple[sqlite3.Connection, list[str]]:
    """A checked, migrated connection, and notices for the learner. `owned`: the path is the
    default one, which only quizprep writes to."""
    try:
        return _connect_checked(path, owned, readonly, busy_timeout_s), []
    except _Unusable as problem:
        if readonly:
            raise StoreError(f"{path} {problem.reason}. Nothing was changed; the quiz app "
                             f"(`quizprep quiz`) moves it aside and starts a new database.") from None
        from quizprep.study.salvage import salvage  # needed only once a file is found damaged

        moved = _move_aside(path, problem.tag)
        connection = _connect_checked(path, owned, readonly, busy_timeout_s)
        # A newer quizprep's file is whole, only not ours to read; a damaged one may still hold answers.
        copied = salvage(moved, connection) if problem.tag == "corrupt" else 0
        started = (f"a new progress database was started with the {copied} answer(s) that could still be "
                   f"read from it" if copied else "a new, empty progress database was started")
        return connection, [f"{path} {problem.reason}; it was moved to {moved} and {started}."]


def failure(path: Path, doing: str, error: sqlite3.Error) -> StoreError:
    """The StoreError for a failed sqlite3 call, with what the learner can do about it."""
    code = getattr(error, "sqlite_errorcode", None)
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        return StoreBusy(f"{doing} {path}: another program (another quizprep?) is writing to it and "
                         f"did not finish in time; nothing was written. Try again in a moment.")
    hint = " Free some disk space, then try again." if code == SQLITE_FULL else ""
    return StoreError(f"{doing} {path}: {error}; nothing was written.{hint}")


def _connect_checked(path: Path, owned: bool, readonly: bool, busy_timeout_s: float) -> sqlite3.Connection:
    empty = _size(path) == 0  # also refuses a folder, in either mode
    if readonly and empty:
        connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        _migrate(connection)  # nothing to read yet: an empty database, and no file is created
        return connection
    try:
        target = f"{path.resolve().as_uri()}?mode=ro" if readonly else str(path)
        connection = sqlite3.connect(target, uri=readonly, timeout=busy_timeout_s, isolation_level=None,
                                     check_same_thread=False)
    except sqlite3.Error as error:
        raise StoreError(f"cannot open the progress database {path}: {error}") from error
    try:
        connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        version = _inspect(connection, path, owned)
        if readonly:
            connection = _snapshot(connection)
        else:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = FULL")
        connection.execute("PRAGMA foreign_keys = ON")
        if version < SCHEMA_VERSION:
            _migrate(connection)
    except BaseException as error:
        connection.close()
        if isinstance(error, sqlite3.Error):
            raise failure(path, "cannot open the progress database", error) from error
        raise
    return connection


def _size(path: Path) -> int:
    """The file's size, 0 when it is missing. Only stat: the file is not opened, because closing
    any descriptor of a database file drops every POSIX lock that this process's SQLite
    connections hold on it. Another process could then take the last connection's turn and
    delete the write-ahead log under a Store still open here, and its next answers with it
    (https://www.sqlite.org/howtocorrupt.html, section 2.2)."""
    try:
        status = path.stat()
    except FileNotFoundError:
        return 0
    except OSError as error:
        raise StoreError(f"cannot open the progress database {path}: {error.strerror or error}") from error
    if stat.S_ISDIR(status.st_mode):
        raise StoreError(f"cannot open the progress database {path}: {os.strerror(errno.EISDIR)}")
    return status.st_size


def _read_header(path: Path) -> bytes:
    """The first 100 bytes (the SQLite header), read only once SQLite has failed to read the
    file: no healthy connection of this process then holds a lock on it (see `_size`)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(100)
    except OSError:
        return b""


def _inspect(connection: sqlite3.Connection, path: Path, owned: bool) -> int:
    """The schema version of a healthy quizprep database; raises for anything else."""
    try:
        application_id = connection.execute("PRAGMA application_id").fetchone()[0]
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        tables = {name for name, in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        ours = application_id == APPLICATION_ID or tables >= OUR_TABLES
        if not ours and (tables or version or application_id):
            _not_ours(path, owned, "it is another program's SQLite database")
        if version > SCHEMA_VERSION:
            raise _Unusable(f"v{version}", f"was written by a newer quizprep (schema version {version}; "
                                           f"this one knows up to {SCHEMA_VERSION})")
        problems = [row[0] for row in connection.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.DatabaseError as error:
        if getattr(error, "sqlite_errorcode", None) in (SQLITE_BUSY, SQLITE_LOCKED):
            raise
        header = _read_header(path)
        if not header.startswith(SQLITE_MAGIC):
            _not_ours(path, owned, "it is not an SQLite database")
        if owned or header[68:72] == APPLICATION_ID.to_bytes(4, "big"):
            raise _Unusable("corrupt", f"is not a readable SQLite database ({error})") from error
        _not_ours(path, owned, f"SQLite cannot read it: {error}")
    # A value breaking a CHECK or NOT NULL constraint is a garbled row, not a broken page: the
    # row checks set it aside and the rest of the file stays in use.
    damaged_pages = [p for p in problems if p != "ok" and not p.startswith(ROW_PROBLEMS)]
    if damaged_pages:
        first = " ".join(damaged_pages[0].replace("*** in database main ***", "").split())
        raise _Unusable("corrupt", f"is damaged ({first[:100]})")
    return version


def _not_ours(path: Path, owned: bool, why: str) -> NoReturn:
    if owned:
        raise _Unusable("corrupt", f"is not a readable quizprep database ({why})")
    raise StoreError(f"{path} is not a quizprep progress database ({why}), so it was left as it is. "
                     f"Give another file with --db (or $QUIZPREP_DB), or move this one away to start "
                     f"a new progress database there.")


def _snapshot(source: sqlite3.Connection) -> sqlite3.Connection:
    """A copy of the database in memory; the file's connection is closed."""
    memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    try:
        source.backup(memory)
    finally:
        source.close()
    return memory


def _migrate(connection: sqlite3.Connection) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        # Read again under the write lock: another instance may have migrated meanwhile.
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise _Unusable(f"v{version}", f"was written by a newer quizprep (schema version {version}; "
                                           f"this one knows up to {SCHEMA_VERSION})")
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
