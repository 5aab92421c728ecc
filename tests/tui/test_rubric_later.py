"""Esc ("Later") on the rubric leaves the assessment for the next start and the session goes on."""
from __future__ import annotations

from free_answers import long_answer_bank, on_screen
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.report import ReportScreen
from quizprep.tui.screens.rubric import RubricScreen

SIZE = (80, 24)


async def test_later_goes_on_to_the_next_question_and_the_report_says_awaiting(make_app, tmp_path, stored):
    bank = long_answer_bank(tmp_path)
    app = make_app(banks=[bank], mode="practice")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, QuestionScreen)
        await pilot.press("1", "enter")
        await on_screen(pilot, FeedbackScreen)
        await pilot.press("enter")
        await on_screen(pilot, QuestionScreen)
        assert app.screen.showing.question.id == "alpha-free"
        await pilot.pause()
        await pilot.press(*"scores grow with d_k", "ctrl+s")
        await on_screen(pilot, RubricScreen)
        await pilot.press("escape")
        await on_screen(pilot, QuestionScreen)
        assert app.screen.showing.question.id == "alpha-multi"
        await pilot.press("escape")
        await on_screen(pilot, ReportScreen)
        report = app.screen.query_one("#report").source
        awaiting = report.index("### Awaiting your self-assessment")
        not_answered = report.index("### Not answered")
        assert "*(alpha-free)*" in report[awaiting:not_answered]
        assert "alpha-free" not in report[not_answered:]
        assert "*(alpha-multi)*" in report[not_answered:]
    with stored() as store:
        [pending] = store.unassessed()
    assert pending.response == "scores grow with d_k"
    app = make_app(banks=[bank])
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, RubricScreen)  # offered again at the next start
        assert str(app.screen.query_one("#learner-answer").content) == "scores grow with d_k"
