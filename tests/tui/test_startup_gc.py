"""The cycle collector is paused only while the first screen is built (quizprep/tui/app.py)."""
from __future__ import annotations

import gc

from quizprep.tui.screens.home import HomeScreen


async def test_the_collector_runs_again_once_home_is_up(make_app):
    assert gc.isenabled()
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        assert gc.isenabled()


async def test_the_collector_runs_again_when_the_app_cannot_start(make_app, tmp_path):
    foreign = tmp_path / "notes.md"
    foreign.write_text("not a quizprep database\n")
    app = make_app(db=foreign)
    async with app.run_test():
        pass
    assert app.return_code == 1
    assert gc.isenabled()
