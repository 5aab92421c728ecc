"""The question's bar wraps its header below the width it needs, the round's timer beside it:
at 80 columns a mock follow-up's stars were cut ('… · follow-up ·'), found walking the app."""
from __future__ import annotations

import re

import pytest

from free_answers import screen_text
from quizprep.tui.screens.question import QuestionScreen, header_line

TIMER = re.compile(r"⏱ \d+:\d\d ")


@pytest.mark.parametrize("size", [(60, 24), (80, 24)])
async def test_the_whole_header_and_the_timer_show_in_a_narrow_mock(make_app, size):
    app = make_app(mode="mock", topics=["alpha"])
    async with app.run_test(size=size) as pilot:
        while not isinstance(app.screen, QuestionScreen):
            await pilot.pause()
        await pilot.pause()
        screen = app.screen
        header = header_line(screen.session, screen.showing)
        shown = screen_text(app)
        assert TIMER.search(shown)
        assert header in TIMER.sub("", shown)  # wrapped around the timer where it does not fit beside it
        assert screen.query_one("#prompt").region.y >= screen.query_one("#question-bar").region.bottom
