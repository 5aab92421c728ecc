"""The free-response box (what the rubric later compares) shows each typed word once after the
terminal is resized."""
from __future__ import annotations

from free_answers import on_screen
from quizprep.tui.screens.question import QuestionScreen

TYPED = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
         "sigma tau upsilon phi chi psi omega")
WIDTHS = [79, 77, 75, 73, 70, 68, 66, 64, 62, 60, 90, 100, 120, 61, 63, 65, 80]


def words_in_the_box(app) -> list[str]:
    box = app.screen.query_one("#answer")
    inside = box.content_region
    rows = app.screen._compositor.render_strips()[inside.y:inside.bottom]
    return " ".join(row.text[inside.x:inside.right] for row in rows).split()


async def type_the_answer(pilot) -> None:
    await on_screen(pilot, QuestionScreen)
    await pilot.pause()
    await pilot.press(*TYPED)
    await pilot.pause()


async def test_resizing_never_shows_a_word_twice(make_app):
    app = make_app(question="alpha-free")
    async with app.run_test(size=(80, 24)) as pilot:
        await type_the_answer(pilot)
        assert words_in_the_box(app) == TYPED.split()
        for width in WIDTHS:
            await pilot.resize_terminal(width, 24)
            await pilot.pause(0.2)
            assert words_in_the_box(app) == TYPED.split(), f"at {width} columns"


async def test_a_shorter_terminal_keeps_the_box_being_typed_in_on_screen(make_app):
    app = make_app(question="alpha-free")
    async with app.run_test(size=(100, 30)) as pilot:
        await type_the_answer(pilot)
        await pilot.resize_terminal(60, 15)
        await pilot.pause(0.3)
        body = app.screen.query_one("#question-body").region
        box = app.screen.query_one("#answer").region
        assert body.y <= box.y and box.bottom <= body.bottom
