"""Stats' "due in the coming days" agrees with Home's due count, or says why it differs: a
question missed just now comes due again later today, not now (issue 32, item 10: Stats said
"Sat 9" while Home said 0 due)."""
from __future__ import annotations

from choices import keys_for
from free_answers import on_screen
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.report import ReportScreen
from quizprep.tui.screens.stats import StatsScreen

SIZE = (100, 30)


async def test_today_names_the_questions_due_now_when_more_come_due_later_today(make_app):
    app = make_app(question="alpha-choice")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press(*keys_for(app, 2), "enter")  # wrong: due again in a minute
        await on_screen(pilot, FeedbackScreen)
        await pilot.press("escape")
        await on_screen(pilot, ReportScreen)
        await pilot.press("enter")
        await on_screen(pilot, HomeScreen)
        assert " · 0 due · " in str(app.screen.query_one("#home-summary").content)
        await pilot.press("s")
        await on_screen(pilot, StatsScreen)
        assert str(app.screen.query_one("#due-ahead").content).startswith("Today 1 (0 due now)  Tue 0")
