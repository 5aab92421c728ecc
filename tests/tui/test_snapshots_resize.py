"""Question and feedback screens follow the terminal when it is resized (issue 32, item 2): they
stayed laid out at the size they opened at, the footer on the old last row. Update the
snapshots with `pytest tests/tui --snapshot-update`."""
from __future__ import annotations

from pathlib import Path

from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen
from test_snapshots import on_screen

DATA = Path(__file__).parent / "data"
NARROW, WIDE = (80, 24), (101, 30)


def rows(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def opened_at(make_app, folder: Path, size: tuple[int, int], resized_to: tuple[int, int] | None,
                    *keys: str) -> list[str]:
    """The rows of the first question of a fresh alpha practice (or, after `keys`, the screen
    they lead to) opened at `size`, then resized to `resized_to`."""
    app = make_app(banks=[DATA / "alpha.yaml"], mode="practice", db=folder / f"{size}{resized_to}.sqlite3")
    async with app.run_test(size=size) as pilot:
        await on_screen(pilot, QuestionScreen)
        await pilot.pause()
        await pilot.press(*keys)
        if keys:
            await on_screen(pilot, FeedbackScreen)
        if resized_to:
            await pilot.resize_terminal(*resized_to)
            await pilot.pause()
            await pilot.pause()
        return rows(app)


async def test_a_question_resized_looks_as_if_opened_at_the_new_size(make_app, tmp_path):
    for start, end in ((NARROW, WIDE), (WIDE, NARROW)):
        assert await opened_at(make_app, tmp_path, start, end) == await opened_at(make_app, tmp_path, end, None)


async def test_a_feedback_resized_looks_as_if_opened_at_the_new_size(make_app, tmp_path):
    for start, end in ((NARROW, WIDE), (WIDE, NARROW)):
        resized = await opened_at(make_app, tmp_path, start, end, "1", "enter")
        assert resized == await opened_at(make_app, tmp_path, end, None, "1", "enter")


def resized(*keys: str, to: tuple[int, int]):
    async def run_before(pilot) -> None:
        await on_screen(pilot, QuestionScreen)
        await pilot.press(*keys)
        if keys:
            await on_screen(pilot, FeedbackScreen)
        await pilot.resize_terminal(*to)
        await pilot.pause()
    return run_before


def test_question_widened(snap_compare, make_app):
    app = make_app(banks=[DATA / "alpha.yaml"], mode="practice")
    assert snap_compare(app, terminal_size=NARROW, run_before=resized(to=WIDE))


def test_question_narrowed(snap_compare, make_app):
    app = make_app(banks=[DATA / "alpha.yaml"], mode="practice")
    assert snap_compare(app, terminal_size=WIDE, run_before=resized(to=NARROW))


def test_feedback_widened(snap_compare, make_app):
    app = make_app(banks=[DATA / "alpha.yaml"], mode="practice")
    assert snap_compare(app, terminal_size=NARROW, run_before=resized("1", "enter", to=WIDE))


def test_feedback_narrowed(snap_compare, make_app):
    app = make_app(banks=[DATA / "alpha.yaml"], mode="practice")
    assert snap_compare(app, terminal_size=WIDE, run_before=resized("1", "enter", to=NARROW))
