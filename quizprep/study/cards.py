"""Each question's FSRS card in the progress database: reviewed with a rating, rebuilt from the
question's history (its rated answers and exercise grades), saved.

The functions work inside the caller's open transaction (`Store._write`)."""
from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import TYPE_CHECKING

from quizprep.study.rows import (
    CARD_COLUMNS, GRADE_COLUMNS, BadRow, card_from_row, decoded, grade_from_row, moment, to_text,
)

if TYPE_CHECKING:
    from fsrs import Card, Rating, Scheduler


def review_card(db: sqlite3.Connection, scheduler: Scheduler, question_id: str, rating: Rating,
                now: datetime) -> Card:
    """The question's card reviewed with `rating` at `now`, saved."""
    from quizprep.study.scheduling import review

    row = db.execute(f"SELECT {CARD_COLUMNS} FROM cards WHERE question_id = ?", (question_id,)).fetchone()
    try:
        card = card_from_row(row)[1] if row else None
    except BadRow:  # garbled since the store opened: the answers still say what it was
        card = rebuild_card(db, scheduler, question_id, before=now)
    return save_card(db, question_id, review(scheduler, card, question_id, rating, now), now)


def rebuild_card(db: sqlite3.Connection, scheduler: Scheduler, question_id: str,
                 before: datetime | None = None) -> Card | None:
    """The question's card replayed from its rated answers and exercise grades (before
    `before`), saved; None when it has none."""
    from fsrs import Rating

    from quizprep.study.scheduling import replay

    events: list[tuple[datetime, Rating, bool]] = []  # (when, rating, from an exercise grade)
    rows = db.execute("SELECT rating, answered_at, assessed_at FROM answers WHERE question_id = ? "
                      "AND rating IS NOT NULL ORDER BY answered_at, id", (question_id,)).fetchall()
    for rating, answered_at, assessed_at in rows:
        try:
            events.append((moment(assessed_at or answered_at), Rating(rating), False))
        except (BadRow, ValueError):  # a garbled answer of its own, or a rating out of range
            continue
    grades = decoded(db.execute(f"SELECT {GRADE_COLUMNS} FROM grades").fetchall(), grade_from_row)
    events += [(g.graded_at, Rating.Good if g.passed else Rating.Again, True)
               for g in grades if question_id in g.lessons]
    events.sort(key=lambda event: event[0])  # stable: answers keep their order
    cards = list(replay(scheduler, question_id, [e for e in events if before is None or e[0] < before]))
    return save_card(db, question_id, cards[-1], cards[-1].last_review or cards[-1].due) if cards else None


def save_card(db: sqlite3.Connection, question_id: str, card: Card, now: datetime) -> Card:
    db.execute(
        f"""INSERT INTO cards ({CARD_COLUMNS}) VALUES (?, ?, ?, ?)
           ON CONFLICT (question_id) DO UPDATE SET card = excluded.card, due = excluded.due,
               reviewed_at = excluded.reviewed_at""",
        (question_id, card.to_json(), to_text(card.due), to_text(now)),
    )
    return card
