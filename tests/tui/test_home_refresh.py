"""Home stays true to the database (issue 13, 6.4): after a session, after the start-up rubric,
and when the learner comes back to it; its topic column uses the width the terminal has."""
from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from choices import keys_for
from free_answers import on_screen
from quizprep.study.stats import compute_stats
from quizprep.tui.screens.home import HomeScreen, bar, percent
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.rubric import RubricScreen
from quizprep.tui.screens.stats import StatsScreen

DATA = Path(__file__).parent / "data"
ALPHA_TITLE = "Alpha — a small bank for the quiz app tests"


def home_rows(app) -> dict[str, list[str]]:
    """Home's counts per topic (the title column left out: it may be shortened)."""
    table = app.screen.query_one(DataTable)
    return {str(key.value): [str(cell) for cell in table.get_row(key)][1:] for key in table.rows}


def stats_rows(app) -> dict[str, list[str]]:
    """What `s` would show for each topic, in Home's columns."""
    stats = compute_stats(app.store, app.questions, now=app.now(), titles=app.loaded.titles())
    return {t.topic: [f"{t.seen}/{t.questions}", str(t.due), percent(t.accuracy),
                      f"{bar(t.mastery)} {percent(t.mastery)}"] for t in stats.topics}


async def test_long_topic_titles_are_shown_whole_when_the_terminal_has_room(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)):
        table = app.screen.query_one(DataTable)
        lines = [table.render_line(y).text for y in range(1, 3)]
        assert any(ALPHA_TITLE in line for line in lines), lines


async def test_a_narrow_terminal_shortens_titles_and_keeps_every_column(make_app):
    app = make_app()
    async with app.run_test(size=(60, 15)):
        table = app.screen.query_one(DataTable)
        header = table.render_line(0).text
        assert "Mastery" in header and len(header.rstrip()) <= 60
        rows = "".join(table.render_line(y).text for y in range(1, 3))
        assert "Alpha " in rows and "Beta " in rows and "a small bank" not in rows  # short titles, not cut long ones


async def test_home_matches_stats_after_the_welcome_back_rubric(make_app):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=(80, 24)) as pilot:
        while app.screen.showing.question.id != "alpha-free":
            await pilot.press("1", "enter")
            await pilot.press("enter")
        await pilot.press(*"the variance grows with d_k", "ctrl+s")
        await on_screen(pilot, RubricScreen)
        await pilot.press("ctrl+q")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, RubricScreen)
        await pilot.press("1", "enter")
        await on_screen(pilot, HomeScreen)
        await pilot.pause()
        assert home_rows(app)["alpha"][0] == "4/4"
        assert home_rows(app) == stats_rows(app)


async def test_home_matches_stats_when_the_learner_comes_back_to_it(make_app, clock):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down", "enter")  # beta, answered wrong: due again in a few minutes
        await on_screen(pilot, QuestionScreen)
        await pilot.press(*keys_for(app, 1), "enter", "enter")  # a wrong answer comes back at the end
        await on_screen(pilot, QuestionScreen)
        await pilot.press("escape", "enter")
        await on_screen(pilot, HomeScreen)
        assert home_rows(app)["beta"][1] == "0"
        clock.advance(hours=2)
        await pilot.press("s", "escape")
        await on_screen(pilot, HomeScreen)
        await pilot.pause()
        assert home_rows(app)["beta"][1] == "1"
        assert home_rows(app) == stats_rows(app)


async def test_stats_shows_long_topic_titles_whole_when_the_terminal_has_room(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("s")
        assert isinstance(app.screen, StatsScreen)
        table = app.screen.query_one("#topic-stats", DataTable)
        assert any(ALPHA_TITLE in table.render_line(y).text for y in range(1, 3))
