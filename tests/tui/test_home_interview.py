"""An interview date on Home (issue 13, item 2): a countdown, each topic's predicted recall on
the day with the weakest first, and keys for weakest-first practice and cram."""
from __future__ import annotations

from datetime import date

from textual.widgets import DataTable

from choices import keys_for
from quizprep.tui.screens.home import HomeScreen, percent
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.report import ReportScreen

SIZE = (100, 30)
ON = date(2025, 3, 24)  # two weeks after the test clock's start, a Monday


async def answer_beta_right_and_alpha_choice_wrong(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "enter")
        await pilot.press(*keys_for(app, 0), "enter", "enter", "enter")
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("up", "enter")
        assert app.screen.showing.question.id == "alpha-choice"
        await pilot.press(*keys_for(app, 1), "enter", "escape")
        assert isinstance(app.screen, ReportScreen)


def table_rows(app) -> list[list[str]]:
    table = app.screen.query_one(DataTable)
    return [[str(cell) for cell in table.get_row_at(y)] for y in range(table.row_count)]


async def test_home_counts_down_and_orders_topics_by_predicted_recall(make_app):
    await answer_beta_right_and_alpha_choice_wrong(make_app)
    app = make_app(interview=ON)
    async with app.run_test(size=SIZE):
        line = str(app.screen.query_one("#home-interview").content)
        assert line.startswith("14 days to your interview (Mon 24 Mar 2025)")
        forecast = app.forecast()
        assert [t.topic for t in forecast.topics] == ["alpha", "beta"]  # alpha's one card was missed
        header = app.screen.query_one(DataTable).render_line(0).text
        assert "Recall Mar 24" in header
        rows = table_rows(app)
        assert [row[0].split(" ")[0] for row in rows] == ["Alpha", "Beta"]
        assert [row[-1] for row in rows] == [percent(t.recall) for t in forecast.topics]
        assert forecast.topics[0].recall < forecast.topics[1].recall


async def test_at_80_columns_the_recall_header_leaves_the_day_to_the_countdown(make_app):
    """Issue 32, item 9: "Recall Dec 15" took seven cells the titles needed; three were cut."""
    app = make_app(interview=ON)
    async with app.run_test(size=(80, 24)):
        header = app.screen.query_one(DataTable).render_line(0).text
        assert header.split()[-1] == "Recall" and "24 Mar 2025" in str(app.screen.query_one("#home-interview").content)


async def test_without_a_date_home_has_no_countdown_or_recall_column(make_app):
    app = make_app()
    async with app.run_test(size=SIZE):
        assert not app.screen.query_one("#home-interview").display
        assert "Recall" not in app.screen.query_one(DataTable).render_line(0).text


async def test_i_practises_weakest_first_and_c_crams(make_app, stored):
    await answer_beta_right_and_alpha_choice_wrong(make_app)
    app = make_app(interview=ON)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("i")
        assert isinstance(app.screen, QuestionScreen)
        session = app.screen.session
        assert session.mode == "practice" and app.screen.showing.question.id != "beta-choice"
        assert session.queue[-1] == "beta-choice"  # the best-known question comes last
        await pilot.press("escape", "enter", "c")
        assert isinstance(app.screen, QuestionScreen) and app.screen.session.mode == "cram"
        assert str(app.screen.query_one("#question-meta").content).startswith("Cram 1/")


async def test_cram_asks_a_sessions_worth_as_interview_practice_does(make_app, monkeypatch):
    """Home says "20 per session" with a date: cram asked every weak question, 1/317 on the
    shipped banks (found walking the app in tmux)."""
    from quizprep.study import lengths

    monkeypatch.setattr(lengths, "INTERVIEW_QUESTIONS", 2)
    app = make_app(interview=ON)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        while not isinstance(app.screen, QuestionScreen):
            await pilot.pause()
        assert app.screen.session.total == 2
    chosen = make_app(interview=ON, length=3)
    async with chosen.run_test(size=SIZE) as pilot:
        await pilot.press("c")
        while not isinstance(chosen.screen, QuestionScreen):
            await pilot.pause()
        assert chosen.screen.session.total == 3
