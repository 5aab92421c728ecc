"""Dialogs over a question keep it in view (a modal over it, not a blank screen), and Enter on a
multi-select with nothing picked says so."""
from __future__ import annotations

import html
import re

import pytest

from choices import keys_for
from quizprep.tui.screens.confirm import ConfirmScreen
from quizprep.tui.screens.flag import FlagScreen
from quizprep.tui.screens.question import QuestionScreen
from test_flows import answer_until

SIZE = (80, 24)


def screen_text(app) -> str:
    """Every character drawn on the terminal, as the learner sees it."""
    svg = app.export_screenshot()
    return html.unescape("".join(re.findall(r"<text [^>]*>(.*?)</text>", svg))).replace("\xa0", " ")


@pytest.mark.parametrize("mode, key, dialog", [("practice", "ctrl+f", FlagScreen),
                                               ("mock", "escape", ConfirmScreen)])
async def test_a_dialog_leaves_the_question_in_view(make_app, mode, key, dialog):
    app = make_app(mode=mode, topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        while not isinstance(app.screen, QuestionScreen):
            await pilot.pause()
        await pilot.pause()  # drawn
        first_line = app.screen.showing.prompt.splitlines()[0]
        word = max(re.findall(r"[A-Za-z]{4,}", first_line), key=len)
        assert word in screen_text(app)
        await pilot.press(key)
        assert isinstance(app.screen, dialog)
        assert word in screen_text(app)


async def test_enter_with_nothing_picked_on_a_multi_select_says_so(make_app):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await answer_until(app, pilot, "alpha-multi")
        await pilot.press("enter")
        assert isinstance(app.screen, QuestionScreen)
        note = app.screen.query_one("#answer-note")  # under the choices, not a toast over them
        assert note.display and "Nothing is picked yet: press the number of each choice that applies" in str(
            note.content)
        await pilot.press(*keys_for(app, 0, 1), "enter")
        assert app.screen.query_one("#verdict").content == "✓ Correct"
