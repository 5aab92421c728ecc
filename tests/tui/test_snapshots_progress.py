"""Snapshots of the progress screens at 80×24 and 100×30 (issue 21): Home with an interview date
on the shipped banks, Stats on them, the history of a numeric question answered wrong, and a
session's summary (update with `pytest tests/tui/test_snapshots_progress.py --snapshot-update`)."""
from __future__ import annotations

import random
from datetime import date
from pathlib import Path

import pytest

from free_answers import on_screen
from quizprep.bank.loader import load_banks
from quizprep.bank.model import ChoiceQuestion
from quizprep.study import session as sessions
from quizprep.study import builders
from quizprep.study.store import Store
from quizprep.tui.screens.history import HistoryScreen
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.report import ReportScreen
from quizprep.tui.screens.stats import StatsScreen

DATA = Path(__file__).parent / "data"
SIZES = pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=lambda size: f"{size[0]}x{size[1]}")
SHIPPED = load_banks(None)


def evening(db: Path, clock, questions, topics: list[str], answers: int = 6) -> sessions.SessionReport:
    """Yesterday: a practice session over `topics`, every other answer wrong, a numeric skipped."""
    clock.advance(days=-1)
    with Store.open(db) as store:
        run = builders.practice(store, questions, topics, limit=answers, now=clock, rng=random.Random(4))
        for n in range(answers):
            showing = run.next()
            if showing is None:
                break
            clock.advance(seconds=20)
            question = showing.question
            if isinstance(question, ChoiceQuestion):
                right = set(question.correct_indices)
                run.answer_choice(showing, right if n % 2 else set(range(len(question.choices))) - right)
            else:
                run.skip(showing)
        report = run.end()
    clock.advance(days=1)
    return report


async def settle(pilot, screen_type: type) -> None:
    await on_screen(pilot, screen_type)
    pilot.app.clear_notifications()
    await pilot.pause()


@SIZES
def test_home_with_a_date_on_the_shipped_banks(snap_compare, make_app, db, clock, size):
    evening(db, clock, SHIPPED.questions, ["memory", "softmax", "training_cost"])

    async def run_before(pilot) -> None:
        await settle(pilot, HomeScreen)

    app = make_app(loaded=SHIPPED, banks=None, interview=date(2025, 3, 24))
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@SIZES
def test_stats_on_the_shipped_banks(snap_compare, make_app, db, clock, size):
    evening(db, clock, SHIPPED.questions, ["memory", "softmax"])

    async def run_before(pilot) -> None:
        await settle(pilot, HomeScreen)
        await pilot.press("s")
        await settle(pilot, StatsScreen)

    app = make_app(loaded=SHIPPED, banks=None)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@SIZES
def test_history_of_a_numeric_answer_with_its_numbers(snap_compare, make_app, db, clock, size):
    questions = load_banks([DATA / "alpha.yaml"]).questions
    with Store.open(db) as store:
        run = builders.practice(store, questions, now=clock, rng=random.Random(3))
        run.queue = ["alpha-numeric"]
        run.answer_numeric(run.next(), "1 GiB")
        run.end()
    clock.advance(hours=1)

    async def run_before(pilot) -> None:
        await settle(pilot, HomeScreen)
        numeric = [q for q in questions if q.id == "alpha-numeric"]
        pilot.app.push_screen(HistoryScreen(pilot.app.store, numeric, clock(), "alpha-numeric"))
        await settle(pilot, HistoryScreen)

    app = make_app(banks=[DATA / "alpha.yaml"])
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@SIZES
def test_session_summary_with_titles(snap_compare, make_app, db, clock, size):
    loaded = load_banks([DATA / "alpha.yaml"])
    report = evening(db, clock, loaded.questions, ["alpha"], answers=3)

    async def run_before(pilot) -> None:
        await settle(pilot, HomeScreen)
        pilot.app.push_screen(ReportScreen(report, titles=loaded.titles()))
        await settle(pilot, ReportScreen)

    app = make_app(banks=[DATA / "alpha.yaml"])
    assert snap_compare(app, terminal_size=size, run_before=run_before)
