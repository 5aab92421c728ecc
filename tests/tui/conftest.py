"""Fixtures for the quiz app tests: a small bank, a fresh database, and a clock that only moves
when a test moves it."""
from __future__ import annotations

import asyncio
import inspect
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from quizprep.study.store import Store
from quizprep.tui.app import QuizApp
from quizprep.tui.options import QuizOptions

DATA = Path(__file__).parent / "data"
START = datetime(2025, 3, 10, 9, 0, tzinfo=timezone.utc)
QUIZ_OPTIONS = list(QuizOptions._fields)  # make_app's other settings: QuizApp's own


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run `async def` tests in a fresh event loop (no asyncio plugin is installed, and Pilot
    needs nothing more)."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(pyfuncitem.obj(**arguments))
    return True


class FakeClock:
    def __init__(self, start: datetime = START) -> None:
        self.moment = start

    def __call__(self) -> datetime:
        return self.moment

    def advance(self, **delta: float) -> None:
        self.moment += timedelta(**delta)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "progress.sqlite3"


@pytest.fixture
def make_app(db: Path, clock: FakeClock):
    """An app on the test banks (alpha, beta), the test database, the fake clock and a fixed seed."""
    def make(**options: Any) -> QuizApp:
        settings: dict[str, Any] = dict(banks=[DATA], db=db, now=clock, tz=timezone.utc, seed=7)
        settings.update(options)
        chosen = {name: settings.pop(name) for name in QUIZ_OPTIONS if name in settings}
        return QuizApp(QuizOptions(**chosen), **settings)
    return make


@pytest.fixture
def stored(db: Path):
    """Read what the app committed: stored() opens the database afresh, as a new run would."""
    def read() -> Store:
        return Store.open(db)
    return read


@pytest.fixture(autouse=True)
def no_enter_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pilot presses keys faster than a person: the feedback's double-Enter guard would take the
    Enter meant for Next. test_screen_flow checks the guard with it on."""
    from quizprep.tui.screens.feedback import FeedbackScreen

    monkeypatch.setattr(FeedbackScreen, "ENTER_GUARD_S", 0.0)
