"""A number that cannot be judged is said under its field, where the learner is looking, not in
a note at the bottom right that covered the field at small sizes (issue 32, item 10)."""
from __future__ import annotations

import pytest
from textual.widgets import Static

from free_answers import on_screen
from quizprep.tui.screens.question import QuestionScreen


@pytest.mark.parametrize("typed", ["lots", ""])
async def test_enter_on_what_is_not_a_number_says_why_under_the_field(make_app, typed):
    app = make_app(question="alpha-numeric")
    async with app.run_test(size=(60, 15), notifications=True) as pilot:
        await on_screen(pilot, QuestionScreen)
        await pilot.pause()
        await pilot.press(*typed, "enter")
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen)
        line = app.screen.query_one("#understood", Static)
        assert str(line.content).startswith(f"✗ {typed!r} is not a number") and line.has_class("-invalid")
        assert "Not judged yet" not in [n.title for n in app._notifications]
