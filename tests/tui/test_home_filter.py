"""Home's `/` filter (issue 21, item 11): the Accuracy column counts only the answers to the
questions that match, and Esc clears the filter with the topics focused, not only in the field."""
from __future__ import annotations

import random
from pathlib import Path

from textual.widgets import DataTable

from quizprep.bank.loader import load_banks
from quizprep.study import builders
from quizprep.study.store import Store
from quizprep.tui.screens.home import HomeScreen

# this folder's banks (`conftest.DATA` is another folder's when tests of two folders run together)
DATA = Path(__file__).parent / "data"

SIZE = (80, 24)


def accuracy(app) -> dict[str, str]:
    table = app.screen.query_one(DataTable)
    return {str(key.value): str(table.get_row(key)[3]) for key in table.rows}


def answer_alpha(db, clock) -> None:
    """alpha-choice right, alpha-multi (tagged masks) wrong: alpha's accuracy is 50 %."""
    questions = load_banks([DATA]).questions
    with Store.open(db) as store:
        run = builders.practice(store, questions, ["alpha"], now=clock, rng=random.Random(1))
        run.queue = ["alpha-choice", "alpha-multi"]
        run.answer_choice(run.next(), {0})
        run.answer_choice(run.next(), {2})
        run.end()


async def test_accuracy_follows_the_filter_and_escape_on_the_topics_clears_it(make_app, db, clock):
    answer_alpha(db, clock)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert accuracy(app)["alpha"] == "50%"
        await pilot.press("slash", *"#masks", "enter")
        assert app.screen.query_one(DataTable).has_focus
        assert accuracy(app) == {"alpha": "0%"}  # only alpha-multi's answer
        await pilot.press("escape")
        assert isinstance(app.screen, HomeScreen) and app.search_text == "" and app.tags == ()
        assert accuracy(app) == {"alpha": "50%", "beta": "—"}
        assert not app.screen.query_one("#home-search").display


async def test_escape_clears_a_filter_given_on_the_command_line(make_app):
    app = make_app(tags=["masks"])
    async with app.run_test(size=SIZE) as pilot:
        assert list(accuracy(app)) == ["alpha"]
        app.screen.query_one(DataTable).focus()
        await pilot.press("escape")
        assert list(accuracy(app)) == ["alpha", "beta"]


async def test_escape_closes_an_empty_search_field(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash")
        assert app.screen.query_one("#home-search").has_focus
        await pilot.press("escape")
        assert not app.screen.query_one("#home-search").display
        assert app.screen.query_one(DataTable).has_focus


def answer_beta(db, clock) -> None:
    questions = load_banks([DATA]).questions
    with Store.open(db) as store:
        run = builders.practice(store, questions, ["beta"], now=clock, rng=random.Random(1))
        run.answer_choice(run.next(), {0})
        run.end()


async def test_topics_outside_topic_are_not_listed_even_with_a_history(make_app, db, clock):
    """`--topic alpha` after studying beta: Home listed beta as "0/0 0 100%" (its history), and
    `p` on it said "no questions in topic(s): beta", by its id."""
    answer_beta(db, clock)
    app = make_app(topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert list(accuracy(app)) == ["alpha"]
        assert "4 questions in 1 topic" in str(app.screen.query_one("#home-summary").content)
        app.start_session("practice", ["beta"])  # were it there to pick, it would be named by its title
        said: list[str] = []
        for _ in range(50):
            await pilot.pause(0.02)
            said = [note.message for note in app._notifications if "questions" in note.message]
            if said:
                break
        assert said == ["No questions to ask in Beta — a second topic."]
        assert isinstance(app.screen, HomeScreen)
