"""Snapshots of the main screens at 80×24 (update with `pytest tests/tui --snapshot-update`)."""
from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from free_answers import on_screen
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.report import ReportScreen
from quizprep.tui.screens.rubric import RubricScreen

DATA = Path(__file__).parent / "data"

SIZE = (80, 24)


async def reach(pilot, question_id: str) -> None:
    """From the start of an alpha practice session, answer with 1 until `question_id` is shown."""
    await on_screen(pilot, QuestionScreen)
    while pilot.app.screen.showing.question.id != question_id:
        await pilot.press("1", "enter")
        await on_screen(pilot, FeedbackScreen)
        await pilot.press("enter")
        await on_screen(pilot, QuestionScreen)


def test_home_with_a_skipped_question_warning(snap_compare, make_app, monkeypatch):
    monkeypatch.chdir(DATA.parent)  # the warning names the file relative to here, on any machine
    assert snap_compare(make_app(), terminal_size=SIZE)


def test_home_light_theme(snap_compare, make_app):
    assert snap_compare(make_app(banks=[DATA / "alpha.yaml"]), terminal_size=SIZE, press=["ctrl+t"])


def test_choice_question_with_code_and_a_pick(snap_compare, make_app):
    app = make_app(banks=[DATA / "alpha.yaml"], mode="practice")
    assert snap_compare(app, terminal_size=SIZE, press=["1"])


def test_numeric_question_says_what_it_understood(snap_compare, make_app):
    async def run_before(pilot) -> None:
        await reach(pilot, "alpha-numeric")
        await pilot.press(*"2.1e9 B")
        pilot.app.screen.query_one(Input).cursor_blink = False  # blinking is a wall-clock race

    app = make_app(banks=[DATA / "alpha.yaml"], mode="practice")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_numeric_feedback_with_worked_steps_and_diagnosis(snap_compare, make_app):
    async def run_before(pilot) -> None:
        await reach(pilot, "alpha-numeric")
        half = pilot.app.screen.showing.draw.answer // 2
        await pilot.press(*f"{half} B", "enter")
        await on_screen(pilot, FeedbackScreen)

    app = make_app(banks=[DATA / "alpha.yaml"], mode="practice")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_rubric_self_assessment(snap_compare, make_app):
    async def run_before(pilot) -> None:
        await reach(pilot, "alpha-free")
        await pilot.press(*"Var(q.k) grows like d_k, so scale it back to 1.", "ctrl+s")
        await on_screen(pilot, RubricScreen)
        await pilot.press("1")

    app = make_app(banks=[DATA / "alpha.yaml"], mode="practice")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_stats_after_a_session(snap_compare, make_app):
    async def run_before(pilot) -> None:
        await reach(pilot, "alpha-free")
        await pilot.press(*"saturation", "ctrl+s")
        await on_screen(pilot, RubricScreen)
        await pilot.press("2", "enter")
        await on_screen(pilot, FeedbackScreen)
        await pilot.press("escape")
        await on_screen(pilot, ReportScreen)
        await pilot.press("enter")
        await on_screen(pilot, HomeScreen)
        await pilot.press("escape", "s")
        pilot.app.clear_notifications()  # toasts expire on a wall-clock timer: not part of the picture

    app = make_app(banks=[DATA / "alpha.yaml"], mode="practice")
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_mock_question_with_timer(snap_compare, make_app):
    assert snap_compare(make_app(banks=[DATA / "alpha.yaml"], mode="mock"), terminal_size=SIZE)


def test_help(snap_compare, make_app):
    assert snap_compare(make_app(banks=[DATA / "alpha.yaml"]), terminal_size=SIZE, press=["question_mark"])
