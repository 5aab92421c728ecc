"""A numeric answer's draft comes back with the numbers it was typed for (found walking the app
in tmux: after kill -9 the draft came back beside freshly drawn numbers)."""
from __future__ import annotations

import random
import sqlite3
from datetime import datetime, timezone

from quizprep.study import session, storefile
from quizprep.study import builders
from quizprep.study.store import Store

NOW = datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)


def numeric_session(store, questions, clock, seed):
    run = builders.practice(store, [q for q in questions if q.id == "alpha-numeric"], now=clock,
                           rng=random.Random(seed))
    return run, run.next()


def test_a_numeric_draft_brings_back_its_numbers(store, questions, clock):
    run, first = numeric_session(store, questions, clock, seed=1)
    run.keep_draft(first, "2*32*8")
    again, second = numeric_session(store, questions, clock, seed=2)
    assert second.draw == first.draw and again.draft(second) == "2*32*8"
    assert again.answer_numeric(second, str(second.draw.answer)).correct
    assert store.draft_seed("alpha-numeric") is None  # handed in: the draft and its seed go
    _, third = numeric_session(store, questions, clock, seed=2)
    assert third.draw.seed == random.Random(2).randrange(1, session.SEED_LIMIT)  # fresh numbers again


def test_a_version_5_database_keeps_its_drafts_and_gains_their_seeds(db_path, monkeypatch):
    monkeypatch.setattr(storefile, "MIGRATIONS", storefile.MIGRATIONS[:5])
    monkeypatch.setattr(storefile, "SCHEMA_VERSION", 5)
    Store.open(db_path, check_rows=False).close()
    raw = sqlite3.connect(db_path)  # as an older quizprep saved it, without a seed
    with raw:
        raw.execute("INSERT INTO drafts (question_id, text, saved_at) VALUES ('alpha-free', 'half an answer', ?)",
                    (NOW.isoformat(),))
    raw.close()
    monkeypatch.undo()
    with Store.open(db_path) as store:
        assert store.schema_version() == storefile.SCHEMA_VERSION and store.notices == ()
        assert store.draft("alpha-free") == "half an answer" and store.draft_seed("alpha-free") is None
