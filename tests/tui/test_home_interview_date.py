"""Setting the interview date in the app (issue 13, item 2: "or a setting in the app"): d on
Home asks for it, the countdown follows, and the date is kept for the next run."""
from __future__ import annotations

from textual.widgets import Input

from quizprep.tui.screens.home import HomeScreen

SIZE = (80, 24)


def countdown(app) -> str | None:
    line = app.screen.query_one("#home-interview")
    return str(line.content) if line.display else None


async def test_d_sets_the_date_and_the_next_run_keeps_it(make_app, stored):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert countdown(app) is None
        await pilot.press("d")
        assert isinstance(app.screen.query_one(Input), Input) and not isinstance(app.screen, HomeScreen)
        await pilot.press(*"2025-03-24", "enter")
        assert isinstance(app.screen, HomeScreen)
        assert countdown(app).startswith("14 days to your interview (Mon 24 Mar 2025)")
    with stored() as store:
        assert store.setting("interview") == "2025-03-24"
    app = make_app()
    async with app.run_test(size=SIZE):
        assert countdown(app).startswith("14 days to your interview")


async def test_a_past_or_unreadable_date_is_refused_and_an_empty_one_clears(make_app, stored):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("d", *"2025-03-01", "enter")
        assert not isinstance(app.screen, HomeScreen)
        assert any("has passed" in n.message for n in app._notifications)
        await pilot.press("ctrl+u", *"next week", "enter")
        assert any("type it as e.g. 2026-12-15, Dec 15 or 15/12" in n.message for n in app._notifications)
        await pilot.press("ctrl+u", *"Mar 24", "enter")  # as people type it: the next 24 March
        assert countdown(app).startswith("14 days to your interview (Mon 24 Mar 2025)")
        await pilot.press("d")
        await pilot.press("ctrl+u", *"2025-03-10", "enter")  # today counts
        assert countdown(app).startswith("Your interview is today")
        await pilot.press("d")
        assert app.screen.query_one(Input).value == "2025-03-10"
        await pilot.press("ctrl+u", "enter")
        assert isinstance(app.screen, HomeScreen) and countdown(app) is None
    app = make_app()
    async with app.run_test(size=SIZE):
        assert countdown(app) is None
