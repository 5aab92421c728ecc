"""Snapshots of Home with an interview date, a choice question in shuffled order and the history
screen at the four sizes issue 13 names (update with
`pytest tests/tui/test_snapshots_home.py --snapshot-update`)."""
from __future__ import annotations

import random
from datetime import date
from pathlib import Path

import pytest

from free_answers import on_screen
from quizprep.bank.loader import load_banks
from quizprep.study import builders
from quizprep.study.store import Store
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.history import HistoryScreen
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.question import QuestionScreen

DATA = Path(__file__).parent / "data"
SIZES = pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 48), (60, 15)],
                                ids=lambda size: f"{size[0]}x{size[1]}")
INTERVIEW = date(2025, 3, 24)


@pytest.fixture
def banks(tmp_path: Path) -> list[Path]:
    """alpha and beta without beta's broken question, whose warning toast would cover Home."""
    beta = (DATA / "beta.yaml").read_text(encoding="utf-8")
    (tmp_path / "beta.yaml").write_text(beta[:beta.index("  - id: beta-broken")], encoding="utf-8")
    return [DATA / "alpha.yaml", tmp_path / "beta.yaml"]


def answered(db: Path, clock, banks: list[Path], picks: dict[str, int]) -> None:
    """Answer each choice question of `picks` once with the bank's choice at that index, a day ago."""
    questions = load_banks(banks).questions
    clock.advance(days=-1)
    with Store.open(db) as store:
        session = builders.practice(store, questions, now=clock, rng=random.Random(1))
        while (showing := session.next()) is not None:
            index = picks.pop(showing.question.id, None)
            if index is not None:
                session.answer_choice(showing, {index})
        session.end()
    clock.advance(days=1)


async def quiet(pilot) -> None:
    pilot.app.clear_notifications()  # toasts expire on a wall-clock timer: not part of the picture
    await pilot.pause()


@SIZES
def test_home_with_an_interview_date(snap_compare, make_app, db, clock, banks, size):
    answered(db, clock, banks, {"beta-choice": 0, "alpha-choice": 1, "alpha-multi": 0})

    async def run_before(pilot) -> None:
        await on_screen(pilot, HomeScreen)
        await quiet(pilot)

    app = make_app(banks=banks, interview=INTERVIEW)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@SIZES
def test_choice_question_in_shuffled_order(snap_compare, make_app, size):
    async def run_before(pilot) -> None:
        await on_screen(pilot, QuestionScreen)
        assert pilot.app.screen.showing.choice_order != (0, 1, 2)
        await pilot.press("down", "space")
        await quiet(pilot)

    app = make_app(banks=[DATA / "alpha.yaml"], mode="practice")
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@SIZES
def test_history_of_a_question_answered_twice(snap_compare, make_app, db, clock, banks, size):
    answered(db, clock, banks, {"alpha-choice": 1})

    async def run_before(pilot) -> None:
        await on_screen(pilot, QuestionScreen)
        order = pilot.app.screen.showing.choice_order
        await pilot.press(str(order.index(0) + 1), "enter")
        await on_screen(pilot, FeedbackScreen)
        await pilot.press("h")
        await on_screen(pilot, HistoryScreen)
        await quiet(pilot)

    app = make_app(banks=[DATA / "alpha.yaml"], question="alpha-choice")
    assert snap_compare(app, terminal_size=size, run_before=run_before)
