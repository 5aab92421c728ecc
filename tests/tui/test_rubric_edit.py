"""A saved rubric score can be changed from the feedback screen that follows it (e)."""
from __future__ import annotations

from free_answers import on_screen
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.report import ReportScreen
from quizprep.tui.screens.rubric import RubricScreen

SIZE = (80, 24)


async def assess(app, pilot, *ticks: str) -> None:
    await on_screen(pilot, QuestionScreen)
    await pilot.pause()
    await pilot.press(*"Var(q.k) = d_k", "ctrl+s")
    await on_screen(pilot, RubricScreen)
    await pilot.press(*ticks, "enter")
    await on_screen(pilot, FeedbackScreen)


def verdict(app) -> str:
    return str(app.screen.query_one("#verdict").content)


async def test_edit_reopens_the_rubric_with_its_ticks_and_saves_the_new_score(make_app, stored):
    app = make_app(question="alpha-free")
    async with app.run_test(size=SIZE) as pilot:
        await assess(app, pilot, "1")
        assert verdict(app) == "✓ Rubric score 50%"
        await pilot.press("e")
        await on_screen(pilot, RubricScreen)
        assert str(app.screen.query_one("#rubric-score").content) == "Score: 2 / 4 = 50%"  # the saved ticks
        await pilot.press("2", "enter")
        await on_screen(pilot, FeedbackScreen)
        assert verdict(app) == "✓ Rubric score 75%"
        assert "- ☑ mentions softmax saturation" in app.screen.query_one("#feedback").source
        await pilot.press("enter")
        await on_screen(pilot, ReportScreen)
        report = app.screen.query_one("#report").source
        assert "75%" in report and "mentions softmax saturation" not in report
    with stored() as store:
        [answer] = store.answers()
        marks = [(m.criterion, m.met) for m in store.rubric_marks(answer.id)]
    assert answer.score == 0.75
    assert marks == [("derives Var(q·k) = d_k", True), ("mentions softmax saturation", True),
                     ("mentions vanishing gradients", False)]


async def test_escape_from_the_edit_keeps_the_score(make_app, stored):
    app = make_app(question="alpha-free")
    async with app.run_test(size=SIZE) as pilot:
        await assess(app, pilot, "1", "2")
        await pilot.press("e")
        await on_screen(pilot, RubricScreen)
        await pilot.press("3", "escape")
        await on_screen(pilot, FeedbackScreen)
        assert verdict(app) == "✓ Rubric score 75%"
    with stored() as store:
        assert [a.score for a in store.answers()] == [0.75]


async def test_only_a_self_assessed_answer_offers_the_edit(make_app):
    app = make_app(question="alpha-choice")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, QuestionScreen)
        await pilot.press("1", "enter")
        await on_screen(pilot, FeedbackScreen)
        await pilot.press("e")
        assert isinstance(app.screen, FeedbackScreen)
        assert "Edit score" not in {b.binding.description for b in app.active_bindings.values()}
