"""Home drawn from the banks' cached summary (a daily start, `quizprep.bank.summary`) is Home
drawn from the banks loaded in full, on the same database: before and after answers, and when a
bank was edited after the summary was kept. The banks are loaded in full once Home is up, or by
the first session if it comes sooner."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from free_answers import on_screen
from quizprep.bank import load_banks, loader
from quizprep.study.scheduling import rating_for_answer
from quizprep.study.store import Store
from quizprep.tui.app import QuizApp
from quizprep.tui.screens.question import QuestionScreen

DATA = Path(__file__).parent / "data"


@pytest.fixture
def banks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("QUIZPREP_CACHE_DIR", str(tmp_path / "cache"))
    return Path(shutil.copytree(DATA, tmp_path / "banks"))


@pytest.fixture
def full_loads(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Each full load of the banks (the app imports load_banks when it first needs them). The
    load in the background after Home is up waits a minute, unless a test says otherwise."""
    monkeypatch.setattr(QuizApp, "AFTER_FIRST_FRAME_S", 60.0)
    loads: list[object] = []
    load = loader.load_banks

    def counted(*args: object, **options: object):
        loads.append(args)
        return load(*args, **options)

    monkeypatch.setattr(loader, "load_banks", counted)
    return loads


async def home_shown(app) -> tuple[list[list[str]], str, list[str]]:
    """Every cell of Home's table, its summary line and the notices it opened with."""
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        rows = [[str(cell) for cell in table.get_row(key)] for key in table.rows]
        line = str(app.screen.query_one("#home-summary", Static).render())
        return rows, line, sorted(str(n.message) for n in app._notifications)


async def both_ways(make_app, banks: Path, full_loads: list[object]) -> tuple[object, object]:
    """Home from the summary (asserting no full load was needed), then from the banks in full."""
    full_loads.clear()
    summarized = await home_shown(make_app(banks=[banks]))
    assert full_loads == []
    return summarized, await home_shown(make_app(banks=[banks], loaded=load_banks([banks])))


def answer_some(db: Path, clock, right: bool) -> None:
    with Store.open(db) as store:
        for question_id, topic, kind in (("alpha-choice", "alpha", "choice"), ("beta-choice", "beta", "choice"),
                                         ("alpha-numeric", "alpha", "numeric")):
            store.record_answer(question_id=question_id, topic=topic, kind=kind, mode="practice", response="4",
                                elapsed_s=10.0, answered_at=clock(), correct=right, score=float(right),
                                rating=rating_for_answer(kind, 1, right, 10.0))


async def test_home_from_the_summary_is_home_from_the_full_banks(make_app, banks, full_loads, db, clock):
    first = await home_shown(make_app(banks=[banks]))  # nothing cached yet: loaded in full, summary kept
    assert len(full_loads) == 1
    summarized, full = await both_ways(make_app, banks, full_loads)
    assert summarized == full == first
    assert any("beta-broken" in notice for notice in full[2])  # the skipped question is still reported
    answer_some(db, clock, right=True)
    clock.advance(days=3)
    answer_some(db, clock, right=False)
    clock.advance(minutes=5)
    after_answers, full = await both_ways(make_app, banks, full_loads)
    assert after_answers == full and after_answers[0] != summarized[0]


async def test_an_edited_bank_is_shown_as_it_is_now(make_app, banks, full_loads, db, clock):
    await home_shown(make_app(banks=[banks]))
    answer_some(db, clock, right=True)
    alpha = banks / "alpha.yaml"
    alpha.write_text(alpha.read_text().replace("title: Alpha", "title: Edited alpha", 1))
    full_loads.clear()
    edited = await home_shown(make_app(banks=[banks]))
    assert len(full_loads) == 1  # the summary was of the old bytes
    assert edited[0][0][0].startswith("Edited alpha")
    summarized, full = await both_ways(make_app, banks, full_loads)
    assert summarized == full == edited


async def test_the_first_session_loads_the_banks_in_full(make_app, banks, full_loads, clock):
    await home_shown(make_app(banks=[banks]))
    full_loads.clear()
    app = make_app(banks=[banks])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert full_loads == []
        await pilot.press("a")
        await on_screen(pilot, QuestionScreen)
        assert len(full_loads) == 1 and app.screen.showing.question in app.loaded.questions




async def test_the_banks_are_loaded_once_home_is_up_and_the_first_session_finds_them(
        make_app, banks, full_loads, monkeypatch):
    await home_shown(make_app(banks=[banks]))
    monkeypatch.setattr(QuizApp, "AFTER_FIRST_FRAME_S", 0.01)
    full_loads.clear()
    app = make_app(banks=[banks])
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(400):  # no key pressed: the app loads them by itself
            if full_loads:
                break
            await pilot.pause(0.05)
        await app.workers.wait_for_complete()
        assert len(full_loads) == 1
        await pilot.press("a")
        await on_screen(pilot, QuestionScreen)
        assert len(full_loads) == 1
