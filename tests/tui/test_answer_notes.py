"""What is said about an answer field is said on a line under it, on every kind of question: a
toast stood over the choices or the text it spoke of at 80x24 (issue 32, item 10). The line goes
once the answer changes."""
from __future__ import annotations

from pathlib import Path

import pytest

from choices import keys_for
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.widgets.answer_note import AnswerNote

SIZE = (80, 24)
ALPHA = [Path(__file__).parent / "data" / "alpha.yaml"]  # no broken question: no start-up toasts


async def asked(app, pilot) -> QuestionScreen:
    while not isinstance(app.screen, QuestionScreen):
        await pilot.pause()
    await pilot.pause()
    return app.screen


def note_under_field(screen: QuestionScreen) -> str:
    """The note's text, checked to be on screen right under the answer field, with no toast up."""
    note, field = screen.query_one(AnswerNote), screen.query_one("#answer")
    assert note.display and note.region.y == field.region.bottom
    assert note.region.bottom <= screen.size.height - 1  # above the footer: in view
    assert [n.title for n in screen.app._notifications] == []
    return str(note.content)


@pytest.mark.parametrize(("question", "hand_in", "said"), [
    ("alpha-choice", "enter", "Not judged yet: Nothing is picked yet"),
    ("alpha-free", "ctrl+s", "Not judged yet: write an answer before comparing it"),
])
async def test_an_answer_not_judged_is_said_under_its_field_until_it_changes(make_app, question, hand_in, said):
    app = make_app(question=question, banks=ALPHA)
    async with app.run_test(size=SIZE) as pilot:
        screen = await asked(app, pilot)
        await pilot.press(hand_in)
        await pilot.pause()
        assert note_under_field(screen).startswith(said)
        await pilot.press(*(keys_for(app, 0) if question == "alpha-choice" else "x"))
        await pilot.pause()
        assert not screen.query_one(AnswerNote).display


@pytest.mark.parametrize(("question", "entered", "said"), [
    ("alpha-choice", "pick", "What you picked last time is back"),
    ("alpha-free", "Var grows", "What you typed last time is back"),
    ("alpha-numeric", "32 MB", "What you typed last time is back"),
])
async def test_a_draft_restored_is_said_under_its_field(make_app, question, entered, said):
    app = make_app(question=question, banks=ALPHA)
    async with app.run_test(size=SIZE) as pilot:
        await asked(app, pilot)
        await pilot.press(*(keys_for(app, 1) if entered == "pick" else entered))
    again = make_app(question=question, banks=ALPHA)
    async with again.run_test(size=SIZE) as pilot:
        screen = await asked(again, pilot)
        assert note_under_field(screen).startswith(said)
