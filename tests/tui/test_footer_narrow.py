"""Every screen's footer at 60 columns: the keys that do not fit are left out whole,
from the last, and help's key stays, as help lists them all (issue 32: the row was cut mid-key)."""
from __future__ import annotations

import pytest
from rich.text import Text

from free_answers import footer_text, on_screen
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.widgets.flat_footer import Piece, fitted

NARROW = (60, 24)
# What each screen's footer keeps at 60 columns: every key whole, help's last.
KEPT_AT_60 = {
    ("alpha-choice", "question"): "123 Pick ⏎ Submit esc End session ^g Don't know f1 Help",
    ("alpha-numeric", "question"): "⏎ Submit esc End session ^g Don't know ^q Quit f1 Help",
    ("alpha-free", "question"): "^s Submit esc End session ^g Don't know ^q Quit f1 Help",
    ("alpha-numeric", "feedback"): "⏎ Next esc End session  1234 Rate ^z Undo h History f1 Help",
    ("alpha-free", "feedback"): "⏎ Next e Edit score esc End session  1234 Rate f1 Help",
}
# The keys to the feedback, burst by burst (a free answer's rubric comes between).
ANSWERS = {"alpha-numeric": [[*"32 MB", "enter"]], "alpha-free": [[*"qk-norm", "ctrl+s"], ["1", "enter"]]}


@pytest.mark.parametrize(("question", "screen"), list(KEPT_AT_60))
async def test_the_footer_keeps_whole_keys_and_help_at_60_columns(make_app, question, screen):
    app = make_app(question=question)
    async with app.run_test(size=NARROW) as pilot:
        await pilot.pause()
        if screen == "feedback":
            for burst in ANSWERS[question]:
                await pilot.press(*burst)
                await pilot.pause()
            assert isinstance(app.screen, FeedbackScreen)
        assert footer_text(app).strip() == KEPT_AT_60[question, screen]



async def test_home_keeps_whole_keys_and_help_at_60_columns(make_app):
    """Home drew Textual's Footer, which cut the row at 60 columns ('/ Search ^q') and lost f1 Help."""
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        await on_screen(pilot, HomeScreen)
        await pilot.pause()
        assert footer_text(app).strip() == "p Practice a All topics r Review m Mock s Stats f1 Help"

async def test_a_footer_that_fits_is_left_whole(make_app):
    app = make_app(question="alpha-numeric")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert footer_text(app).endswith("^q Quit f1 Help ^f Flag")


async def test_clicking_a_key_of_a_narrowed_footer_presses_that_key(make_app):
    app = make_app(question="alpha-numeric")
    async with app.run_test(size=NARROW) as pilot:
        await pilot.pause()
        await pilot.click("FlatFooter", offset=(footer_text(app).index("f1 Help") + 1, 0))
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"


def piece(text: str, action: str) -> Piece:
    return Piece(Text(text), [(0, len(text), action)], action)


def test_fitted_leaves_out_the_last_keys_first_and_help_never():
    pieces = [piece("a Alpha ", "alpha"), piece("f1 Help ", "app.help"), piece("b Beta ", "beta")]
    assert fitted(pieces, 30) == pieces
    assert [p.action for p in fitted(pieces, 16)] == ["alpha", "app.help"]
    assert [p.action for p in fitted(pieces, 10)] == ["app.help"]
    assert [p.action for p in fitted(pieces, 3)] == ["app.help"]  # nothing left to leave out
