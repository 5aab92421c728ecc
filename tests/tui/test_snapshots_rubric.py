"""Snapshots of the rubric, feedback-after-rubric, mock-confirmation and debrief screens at the
four sizes issue 13 names (update with `pytest tests/tui/test_snapshots_rubric.py --snapshot-update`)."""
from __future__ import annotations

import pytest

from free_answers import long_answer_bank, on_screen
from quizprep.tui.screens.confirm import ConfirmScreen
from quizprep.tui.screens.debrief import DebriefScreen
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.report import ReportScreen
from quizprep.tui.screens.rubric import RubricScreen

SIZES = pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 48), (60, 15)],
                                ids=lambda size: f"{size[0]}x{size[1]}")
ANSWER = "Var(q.k) grows like d_k, so the scores are scaled back to unit variance."


async def to_rubric(pilot) -> None:
    await on_screen(pilot, QuestionScreen)
    await pilot.pause()
    await pilot.press(*ANSWER, "ctrl+s")
    await on_screen(pilot, RubricScreen)
    await pilot.press("1")


@SIZES
def test_rubric_with_a_long_model_answer(snap_compare, make_app, tmp_path, size):
    app = make_app(banks=[long_answer_bank(tmp_path)], question="alpha-free")
    assert snap_compare(app, terminal_size=size, run_before=to_rubric)


@SIZES
def test_feedback_after_the_rubric(snap_compare, make_app, size):
    async def run_before(pilot) -> None:
        await to_rubric(pilot)
        await pilot.press("enter")
        await on_screen(pilot, FeedbackScreen)
        pilot.app.clear_notifications()  # toasts expire on a wall-clock timer: not part of the picture

    assert snap_compare(make_app(question="alpha-free"), terminal_size=size, run_before=run_before)


@SIZES
def test_mock_asks_before_ending_with_two_minutes_left(snap_compare, make_app, clock, size):
    async def run_before(pilot) -> None:
        await on_screen(pilot, QuestionScreen)
        clock.advance(minutes=18, seconds=30)
        for _ in range(100):  # the timer looks at the clock twice a second: wait for it, even under load
            await pilot.pause(0.05)
            if pilot.app.screen.query_one("#timer").has_class("-warn"):
                break
        await pilot.pause(0.6)  # one more tick, so the time shown is the one the snapshot holds
        await pilot.press("escape")
        await on_screen(pilot, ConfirmScreen)
        pilot.app.clear_notifications()

    app = make_app(topics=["alpha"], mode="mock")
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@SIZES
def test_debrief_of_a_free_answer(snap_compare, make_app, size):
    async def run_before(pilot) -> None:
        await to_rubric(pilot)
        await pilot.press("enter")
        await on_screen(pilot, FeedbackScreen)
        await pilot.press("enter")
        await on_screen(pilot, ReportScreen)
        await pilot.press("d")
        await on_screen(pilot, DebriefScreen)
        pilot.app.clear_notifications()

    assert snap_compare(make_app(question="alpha-free"), terminal_size=size, run_before=run_before)
