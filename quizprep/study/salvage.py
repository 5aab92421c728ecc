"""Copying what can still be read out of a damaged progress database into the new one.

A damaged page makes SQLite fail every query whose path crosses it, but rows on the other pages
still read one at a time, in rowid order. Every row copied passes the same checks as a row of a
healthy database (`quizprep.study.rows`); the damaged file itself is kept as it was moved aside.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Callable, Iterator, Sequence

from quizprep.study.rows import (
    ANSWER_COLUMNS, CARD_COLUMNS, GRADE_COLUMNS, MARK_COLUMNS, BadRow, answer_from_row, card_from_row, grade_from_row,
    mark_from_row, moment, text_factory,
)

SQLITE_CORRUPT = 11
MAX_FAILED_SEEKS = 100_000  # past one damaged stretch of rowids: a few tenths of a second at most
SESSION_COLUMNS = "id, mode, topics, started_at, ended_at"
SETTING_COLUMNS = "key, value"


def salvage(damaged: Path, target: sqlite3.Connection) -> int:
    """Copy every readable, valid row of the database file `damaged` into `target` (a new, empty
    progress database); returns how many answers were copied."""
    try:
        source = sqlite3.connect(f"{damaged.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return 0
    source.text_factory = text_factory
    try:
        sessions = _readable(source, "sessions", SESSION_COLUMNS, _session)
        answers = _readable(source, "answers", ANSWER_COLUMNS, answer_from_row)
        marks = _readable(source, "rubric_marks", MARK_COLUMNS, mark_from_row)
        cards = _readable(source, "cards", CARD_COLUMNS, card_from_row)
        settings = _readable(source, "settings", SETTING_COLUMNS, _setting)  # none before schema v4
        grades = _readable(source, "grades", GRADE_COLUMNS, grade_from_row)  # none before schema v3
    finally:
        source.close()
    # Keep references whole: an answer whose session was lost keeps no session, a mark whose
    # answer was lost is dropped.
    session_ids = {row[0] for row in sessions}
    answers = [row if row[1] in session_ids else (row[0], None, *row[2:]) for row in answers]
    answer_ids = {row[0] for row in answers}
    marks = [row for row in marks if row[0] in answer_ids]
    target.execute("BEGIN IMMEDIATE")
    try:
        for table, columns, rows in (("sessions", SESSION_COLUMNS, sessions), ("answers", ANSWER_COLUMNS, answers),
                                     ("rubric_marks", MARK_COLUMNS, marks), ("cards", CARD_COLUMNS, cards),
                                     ("settings", SETTING_COLUMNS, settings), ("grades", GRADE_COLUMNS, grades)):
            slots = ", ".join("?" * len(columns.split(", ")))
            # OR IGNORE: a garbled key that now repeats another row's keeps the first row
            target.executemany(f"INSERT OR IGNORE INTO {table} ({columns}) VALUES ({slots})", rows)
    except sqlite3.Error:
        target.execute("ROLLBACK")
        return 0
    target.execute("COMMIT")
    return len(answers)


def _readable(db: sqlite3.Connection, table: str, columns: str,
              decode: Callable[[Sequence[object]], object]) -> list[tuple]:
    """The rows of `table` that read and decode, in rowid order. Read upwards and downwards:
    a garbled rowid can look larger than every row after it, which hides those from one walk."""
    found = {}
    for ascending in (True, False):
        for rowid, row in _walk(db, table, columns, ascending):
            try:
                decode(row)
            except BadRow:
                continue
            found[rowid] = row
    return [found[rowid] for rowid in sorted(found)]


def _walk(db: sqlite3.Connection, table: str, columns: str, ascending: bool) -> Iterator[tuple[int, tuple]]:
    """(rowid, row) one row at a time, stepping past rowids whose pages fail to read."""
    step = 1 if ascending else -1
    bound, failed = -(2**63) if ascending else 2**63 - 1, 0
    query = (f"SELECT rowid, {columns} FROM {table} WHERE rowid {'>' if ascending else '<'} ? "
             f"ORDER BY rowid {'ASC' if ascending else 'DESC'} LIMIT 1")
    while failed < MAX_FAILED_SEEKS:
        try:
            row = db.execute(query, (bound,)).fetchone()
        except sqlite3.DatabaseError as error:
            if getattr(error, "sqlite_errorcode", None) != SQLITE_CORRUPT:
                return  # not a damaged page (no such table, not a database...): nothing more here
            bound, failed = bound + step, failed + 1
            continue
        if row is None:
            return
        if (row[0] - bound) * step <= 0:  # a damaged page can answer out of order
            bound, failed = bound + step, failed + 1
            continue
        bound, failed = row[0], 0
        yield row[0], row[1:]


def _session(row: Sequence[object]) -> None:
    id_, mode, topics, started_at, ended_at = row
    if type(id_) is not int or type(mode) is not str or type(topics) is not str:
        raise BadRow("a session is unreadable")
    moment(started_at)
    if ended_at is not None:
        moment(ended_at)


def _setting(row: Sequence[object]) -> None:
    if not all(type(part) is str for part in row):
        raise BadRow("a setting is unreadable")
