"""The theme chosen with Ctrl+T is the theme of the next run (issue 13, 6.7)."""
from __future__ import annotations

from quizprep.tui.app import DARK, LIGHT

SIZE = (80, 24)


async def test_the_theme_chosen_is_kept_for_the_next_run(make_app, stored):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == DARK
        await pilot.press("ctrl+t")
        assert app.theme == LIGHT
    with stored() as store:
        assert store.setting("theme") == LIGHT
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == LIGHT
        await pilot.press("ctrl+t")
    app = make_app()
    async with app.run_test(size=SIZE):
        assert app.theme == DARK


async def test_a_theme_name_this_textual_does_not_know_falls_back_to_dark(make_app, stored):
    with stored() as store:
        store.set_setting("theme", "no-such-theme")
    app = make_app()
    async with app.run_test(size=SIZE):
        assert app.theme == DARK
