"""Search and tag filter on Home (issue 13, item 7): `/` opens a field; words and #tags narrow
the topics Home shows and the questions every session draws from; Esc clears it."""
from __future__ import annotations

from textual.widgets import DataTable, Input

from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.question import QuestionScreen

SIZE = (80, 24)


def summary(app) -> str:
    return str(app.screen.query_one("#home-summary").content)


def field_shown(app) -> bool:
    fields = app.screen.query("#home-search")
    return bool(fields) and fields.first().display


def topic_rows(app) -> dict[str, str]:
    table = app.screen.query_one(DataTable)
    return {str(key.value): str(table.get_row(key)[1]) for key in table.rows}


def asks_only(app, question_id: str) -> bool:
    """The session the filter started asks `question_id` and nothing else."""
    screen = app.screen
    return (isinstance(screen, QuestionScreen) and screen.showing.question.id == question_id
            and screen.session.total == 1)


async def test_a_tag_narrows_home_and_the_practice_session(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert not field_shown(app)
        await pilot.press("slash")
        search = app.screen.query_one("#home-search", Input)
        assert field_shown(app) and search.has_focus
        await pilot.press(*"#masks")
        assert topic_rows(app) == {"alpha": "0/1"}
        assert summary(app).startswith("1 question in 1 topic ·")
        await pilot.press("enter")
        assert app.screen.query_one(DataTable).has_focus and search.display
        await pilot.press("a")
        assert asks_only(app, "alpha-multi")


async def test_words_match_prompts_and_escape_clears_the_filter(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"KV cache")
        assert topic_rows(app) == {"alpha": "0/1"}
        await pilot.press("enter", "a")
        assert asks_only(app, "alpha-numeric")
        await pilot.press("escape", "enter")
        assert isinstance(app.screen, HomeScreen)
        assert topic_rows(app) == {"alpha": "0/1"}  # the filter outlives the session
        await pilot.press("slash", "escape")
        assert not field_shown(app)
        assert topic_rows(app) == {"alpha": "0/4", "beta": "0/1"}
        assert summary(app).startswith("5 questions in 2 topics")


async def test_the_command_lines_search_shows_in_the_field(make_app):
    app = make_app(search_text="softmax", tags=["scaling"])
    async with app.run_test(size=SIZE):
        search = app.screen.query_one("#home-search", Input)
        assert search.display and search.value == "#scaling softmax"
        assert topic_rows(app) == {"alpha": "0/1"}


async def test_a_tag_is_found_by_its_start(make_app):
    # Nobody types a whole tag: "#kv" is "#kv-cache", as "mem" would be "memory".
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"#kv")
        assert topic_rows(app) == {"alpha": "0/1"}
        await pilot.press("enter", "a")
        assert asks_only(app, "alpha-numeric")


async def test_a_search_that_matches_nothing_says_so_and_how_to_clear_it(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"#rope")
        assert topic_rows(app) == {}
        assert summary(app) == "No topic matches #rope · Esc clears the filter"
        await pilot.press("enter", "escape")
        assert topic_rows(app) == {"alpha": "0/4", "beta": "0/1"}
        assert summary(app).startswith("5 questions in 2 topics")
