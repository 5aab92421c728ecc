"""Rows of the progress database, read defensively.

`PRAGMA quick_check` checks pages, not values: a few stray bytes inside a row leave it passing
while the row's text is no longer UTF-8, its card JSON no longer parses or a date no longer
reads. Every row is decoded here and checked; one that fails raises BadRow, so that it is
reported and set aside (`find_damage`, `set_aside`) and the rest of the progress stays readable.
"""
from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Callable, Iterable, NamedTuple, Sequence, TypeGuard, TypeVar

if TYPE_CHECKING:
    import sqlite3

    from pathlib import Path

    from fsrs import Card

KINDS = ("choice", "numeric", "free")
ANSWER_COLUMNS = ("id, session_id, question_id, topic, kind, mode, answered_at, elapsed_s, response, "
                  "seed, correct, score, rating, assessed_at")
MARK_COLUMNS = "answer_id, item, criterion, weight, met"
CARD_COLUMNS = "question_id, card, due, reviewed_at"
# The two values of a card's JSON that its retrievability depends on, read by SQLite's JSON
# functions: Home counts what is due and its mastery without decoding every card in Python.
SCHEDULE_COLUMNS = ("question_id, due, json_valid(card), "
                    "CASE WHEN json_valid(card) THEN json_extract(card, '$.stability') END, "
                    "CASE WHEN json_valid(card) THEN json_extract(card, '$.last_review') END")
GRADE_COLUMNS = "id, exercise, file, graded_at, score, passed, diagnoses, lessons"
DAMAGEABLE = ("answers", "rubric_marks", "cards", "grades")  # each has a damaged_<name> table (v2, v3)


class BadRow(ValueError):
    """A row whose values cannot be what quizprep wrote."""


class Garbled:
    """Text that is not UTF-8, as the connection's text factory hands it over instead of failing
    the whole query."""

    __slots__ = ("raw",)

    def __init__(self, raw: bytes) -> None:
        self.raw = raw


def text_factory(raw: bytes) -> str | Garbled:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return Garbled(raw)


class Answer(NamedTuple):
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


class RubricMark(NamedTuple):
    answer_id: int
    item: int
    criterion: str
    weight: float
    met: bool


class Schedule(NamedTuple):
    """What Home's overview needs of a question's FSRS card: when it is due, and what its
    retrievability depends on (both None while it has never been reviewed)."""

    due: datetime
    stability: float | None
    last_review: datetime | None


class NamedMistake(NamedTuple):
    """A diagnosis the grader named, with the quiz question that teaches it."""

    id: str
    title: str
    quiz: str


class Grade(NamedTuple):
    """One `quizprep grade` of a file. `lessons`: the questions it reviewed (lapses when it
    failed, successes when it passed)."""

    id: int
    exercise: str
    file: str
    graded_at: datetime
    score: float
    passed: bool
    diagnoses: tuple[NamedMistake, ...]
    lessons: tuple[str, ...]


class Damage(NamedTuple):
    table: str
    rowid: int
    reason: str


def answer_from_row(row: Sequence[object]) -> Answer:
    (id_, session_id, question_id, topic, kind, mode, answered_at, elapsed_s, response, seed,
     correct, score, rating, assessed_at) = row
    if not (type(id_) is int and _whole_or_none(session_id) and _whole_or_none(seed)):
        raise BadRow("an id is not a whole number")
    if not (type(question_id) is str and type(topic) is str and type(mode) is str and type(response) is str
            and type(kind) is str and kind in KINDS):
        raise BadRow("a text field is not readable text")
    if not (_real(elapsed_s) and elapsed_s >= 0):
        raise BadRow("the time taken is not a number of seconds")
    if not (correct in (None, 0, 1) and (rating is None or type(rating) is int and 1 <= rating <= 4)
            and (score is None or _real(score) and 0 <= score <= 1)):
        raise BadRow("score or rating out of range")
    return Answer(id_, session_id, question_id, topic, kind, mode, moment(answered_at), float(elapsed_s),
                  response, seed, None if correct is None else bool(correct), score, rating,
                  None if assessed_at is None else moment(assessed_at))


def mark_from_row(row: Sequence[object]) -> RubricMark:
    answer_id, item, criterion, weight, met = row
    if not (type(answer_id) is int and type(item) is int and type(criterion) is str
            and _real(weight) and met in (0, 1)):
        raise BadRow("a rubric mark is unreadable")
    return RubricMark(answer_id, item, criterion, float(weight), bool(met))


def card_from_row(row: Sequence[object]) -> tuple[str, Card]:
    """(question id, card) of a `cards` row; the FSRS card JSON is checked value by value."""
    from fsrs import Card

    question_id, text, due, reviewed_at = row
    if not (type(question_id) is str and type(text) is str):
        raise BadRow("a text field is not readable text")
    moment(due)
    moment(reviewed_at)
    try:
        card = Card.from_json(text)
    except Exception as error:  # noqa: BLE001 - whatever the JSON holds, the card is unreadable
        raise BadRow(f"the review schedule does not parse ({type(error).__name__})") from None
    if not (type(card.step) in (int, type(None)) and all(
            value is None or _real(value) and value > 0 for value in (card.stability, card.difficulty))):
        raise BadRow("the review schedule holds impossible values")
    if not (card.due.tzinfo is not None and (card.last_review is None or card.last_review.tzinfo is not None)):
        raise BadRow("the review schedule's dates have no time zone")
    return question_id, card


def schedule_from_row(row: Sequence[object]) -> tuple[str, Schedule]:
    """(question id, schedule) of a `SCHEDULE_COLUMNS` row, checked as `card_from_row` checks
    the values it reads."""
    question_id, due, valid_json, stability, last_review = row
    if not (type(question_id) is str and valid_json == 1):
        raise BadRow("the review schedule does not parse")
    if not (stability is None or _real(stability) and stability > 0):
        raise BadRow("the review schedule holds impossible values")
    return question_id, Schedule(moment(due), stability, None if last_review is None else moment(last_review))


def grade_from_row(row: Sequence[object]) -> Grade:
    id_, exercise, file, graded_at, score, passed, diagnoses, lessons = row
    if not (type(id_) is int and type(exercise) is str and type(file) is str and type(diagnoses) is str
            and type(lessons) is str):
        raise BadRow("a text field is not readable text")
    if not (_real(score) and 0 <= score <= 1 and passed in (0, 1)):
        raise BadRow("score out of range")
    try:
        mistakes = tuple(NamedMistake(**item) for item in json.loads(diagnoses))
        lesson_ids = tuple(json.loads(lessons))
    except (TypeError, ValueError):
        raise BadRow("the grade's diagnoses do not parse") from None
    if not (all(type(v) is str for m in mistakes for v in (m.id, m.title, m.quiz))
            and all(type(v) is str for v in lesson_ids)):
        raise BadRow("the grade's diagnoses do not parse")
    return Grade(id_, exercise, file, moment(graded_at), float(score), bool(passed), mistakes, lesson_ids)


def to_text(moment: datetime) -> str:
    """How a time is stored: ISO 8601 in UTC, to the microsecond (`moment` reads it back)."""
    if moment.tzinfo is None:
        raise ValueError("times must be timezone-aware")
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def moment(text: object) -> datetime:
    """A stored time (ISO 8601, UTC offset included)."""
    if type(text) is not str:
        raise BadRow("a date is unreadable")
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise BadRow("a date is unreadable") from None
    if value.tzinfo is None:
        raise BadRow("a date has no time zone")
    return value


Decoded = TypeVar("Decoded")


def decoded(rows: Iterable[Sequence[object]], decode: Callable[[Sequence[object]], Decoded]) -> list[Decoded]:
    """The rows that decode; damaged ones are left out (they are reported when the store opens)."""
    good = []
    for row in rows:
        try:
            good.append(decode(row))
        except BadRow:
            continue
    return good


def find_damage(db: sqlite3.Connection) -> list[Damage]:
    """Every answer, rubric mark, card and grade row that does not decode (about 6 ms per 1,000 rows)."""
    damage = []
    for table, columns, decode in (("answers", ANSWER_COLUMNS, answer_from_row),
                                   ("rubric_marks", MARK_COLUMNS, mark_from_row),
                                   ("cards", CARD_COLUMNS, card_from_row),
                                   ("grades", GRADE_COLUMNS, grade_from_row)):
        for rowid, *values in db.execute(f"SELECT rowid, {columns} FROM {table}"):
            try:
                decode(values)
            except BadRow as error:
                damage.append(Damage(table, rowid, str(error)))
    return damage


def set_aside(db: sqlite3.Connection, damage: Sequence[Damage], found_at: str) -> list[str]:
    """Move damaged rows, byte for byte, to the damaged_* tables, in the caller's transaction. An
    answer's rubric marks go with it. Returns the question ids whose card was set aside (where
    the id is still readable)."""
    db.execute("REINDEX")  # a garbled value no longer matches its index entry, which DELETE needs
    lost_cards = []
    for item in damage:
        if item.table == "answers":
            _move(db, "rubric_marks", "answer_id = ?", item.rowid, item.reason, found_at)
        elif item.table == "cards":
            (question_id,) = db.execute("SELECT question_id FROM cards WHERE rowid = ?", (item.rowid,)).fetchone()
            if isinstance(question_id, str):
                lost_cards.append(question_id)
        _move(db, item.table, "rowid = ?", item.rowid, item.reason, found_at)
    return lost_cards


def _move(db: sqlite3.Connection, table: str, where: str, key: int, reason: str, found_at: str) -> None:
    assert table in DAMAGEABLE
    db.execute(f"INSERT INTO damaged_{table} SELECT *, ?, ? FROM {table} WHERE {where}", (reason, found_at, key))
    db.execute(f"DELETE FROM {table} WHERE {where}", (key,))


def describe(damage: Sequence[Damage]) -> str:
    """E.g. "2 answers and 1 review schedule"."""
    names = {"answers": ("answer", "answers"), "rubric_marks": ("rubric mark", "rubric marks"),
             "cards": ("review schedule", "review schedules"), "grades": ("exercise grade", "exercise grades")}
    counts = [(sum(d.table == table for d in damage), names[table]) for table in DAMAGEABLE]
    parts = [f"{n} {plural if n > 1 else single}" for n, (single, plural) in counts if n]
    return " and ".join(parts)


def damage_notice(damage: Sequence[Damage], path: Path, *, readonly: bool, rebuilt: Sequence[str]) -> str:
    """What the learner is told of rows that no longer decode, set aside (or, read-only, left out)."""
    one = len(damage) == 1
    if readonly:
        what = (f"{'is' if one else 'are'} left out here; the file was not changed (the quiz app "
                f"sets damaged records aside when it next opens)")
    else:
        what = f"{'was' if one else 'were'} set aside in its damaged_* tables"
    rebuilt_text = f" The review schedule of {', '.join(rebuilt)} was rebuilt from your answers." if rebuilt else ""
    return (f"{describe(damage)} in {path} could not be read ({damage[0].reason}) and {what}. "
            f"The rest of your progress is intact.{rebuilt_text}")


def _whole_or_none(value: object) -> TypeGuard[int | None]:
    return value is None or type(value) is int


def _real(value: object) -> TypeGuard[int | float]:
    """A finite number, as SQLite hands back an INTEGER or a REAL."""
    return (type(value) is int or type(value) is float) and math.isfinite(value)
