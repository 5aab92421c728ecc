"""The shipped banks at 80×24 and 100×30 (issue 21, item 9): Home with an interview date shows
every topic and titles longer than 23 characters; in-app Stats shows every topic in the screen's
own scroll, not a box scrolling inside it; footers end with a whole key, not "^f Fl"."""
from __future__ import annotations

from datetime import date

import pytest
from textual.widgets import DataTable

from free_answers import on_screen
from quizprep.bank.loader import load_banks
from quizprep.study.overview import short_title
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.widgets.flat_footer import FlatFooter
from quizprep.tui.screens.stats import StatsScreen

SIZES = pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=lambda size: f"{size[0]}x{size[1]}")
SHIPPED = load_banks(None)
TITLES = {bank.topic: bank.title for bank in SHIPPED.banks}


def shown_titles(table: DataTable) -> dict[str, str]:
    return {str(key.value): str(table.get_row(key)[0]) for key in table.rows}


def assert_readable(shown: dict[str, str]) -> None:
    """Each title whole or short; cut (…) only where even the short form is wider than 30."""
    for topic, text in shown.items():
        if text.endswith("…"):
            assert len(text) > 30 and short_title(TITLES[topic]).startswith(text[:-1]), text
        else:
            assert text in (TITLES[topic], short_title(TITLES[topic])), text


@SIZES
async def test_home_with_a_date_shows_every_topic_with_readable_titles(make_app, size):
    app = make_app(loaded=SHIPPED, banks=None, interview=date(2025, 3, 24))
    async with app.run_test(size=size) as pilot:
        await on_screen(pilot, HomeScreen)
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        assert table.row_count == len(TITLES) == 19
        assert table.max_scroll_y == 0  # the last topic is on screen without scrolling
        assert_readable(shown_titles(table))


@SIZES
async def test_stats_shows_every_topic_without_a_nested_scroll(make_app, size):
    app = make_app(loaded=SHIPPED, banks=None)
    async with app.run_test(size=size) as pilot:
        await on_screen(pilot, HomeScreen)
        await pilot.press("s")
        await on_screen(pilot, StatsScreen)
        await pilot.pause()
        table = app.screen.query_one("#topic-stats", DataTable)
        assert table.row_count == len(TITLES)
        assert table.max_scroll_y == 0 and table.size.height == len(TITLES) + 1  # rows and the header
        topics = [t.topic for t in app.screen.stats.topics]
        assert_readable({topic: str(table.get_row_at(row)[0]) for row, topic in enumerate(topics)})


async def test_a_choice_question_footer_ends_with_a_whole_key_at_80_columns(make_app):
    app = make_app(mode="practice")
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, QuestionScreen)
        await pilot.pause()
        footer = app.screen.query_one(FlatFooter)
        drawn = footer.render().plain.rstrip()
        assert drawn.endswith("^f Flag") and len(drawn) <= footer.size.width == 80
        assert footer.keys[-1][2] == "ctrl+f"
