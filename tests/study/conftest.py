from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from quizprep.bank import load_banks
from quizprep.study.scheduling import make_scheduler
from quizprep.study.store import Store

DATA = Path(__file__).parent / "data"
START = datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)


class Clock:
    """A hand-driven UTC clock: `clock()` reads it, `clock.tick(seconds)` advances it."""

    def __init__(self, start: datetime = START) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def tick(self, seconds: float = 0, **delta: float) -> datetime:
        self.now += timedelta(seconds=seconds, **delta)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "progress.sqlite3"


@pytest.fixture
def store(db_path: Path):
    with Store.open(db_path, scheduler=make_scheduler(fuzzing=False)) as opened:
        yield opened


@pytest.fixture(scope="session")
def questions():
    result = load_banks([DATA / "alpha.yaml", DATA / "beta.yaml"])
    assert not result.errors
    return result.questions


@pytest.fixture
def by_id(questions):
    return {q.id: q for q in questions}
