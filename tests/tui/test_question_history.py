""""Why is this due?" and a per-card history (issue 13, item 7): h on a question, its feedback
or a Home topic opens the answers given, what FSRS made of each, and why the card is due."""
from __future__ import annotations

from choices import keys_for
from free_answers import edited_alpha_bank
from quizprep.study.history import why_due
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.history import HistoryScreen
from quizprep.tui.screens.home import HomeScreen

SIZE = (100, 30)


def lines(app) -> str:
    return "\n".join(str(s.content) for s in app.screen.query(".history-line, .history-why, .history-title"))


async def test_h_on_feedback_shows_the_answer_its_rating_and_why_it_is_due(make_app, clock):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*keys_for(app, 1), "enter")
        assert isinstance(app.screen, FeedbackScreen)
        clock.advance(minutes=30)
        await pilot.press("h")
        assert isinstance(app.screen, HistoryScreen)
        text = lines(app)
        question = next(q for q in app.questions if q.id == "alpha-choice")
        assert why_due(app.store, question, clock()) in text
        assert "You answered it wrong on 2025-03-10 09:00 UTC" in text
        assert "2025-03-10 09:00  practice  ✗ wrong  Again  next due 2025-03-10 09:10" in text
        assert "picked: To save FLOPs" in text
        await pilot.press("escape")
        assert isinstance(app.screen, FeedbackScreen)


async def test_h_on_a_question_never_answered_says_so_and_the_question_stays(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("h")
        assert isinstance(app.screen, HistoryScreen)
        assert "Never answered" in lines(app) and "No answers yet." in lines(app)
        await pilot.press("escape")
        await pilot.press(*keys_for(app, 0), "enter")
        assert isinstance(app.screen, FeedbackScreen)
    with stored() as store:
        assert [a.question_id for a in store.answers()] == ["alpha-choice"]


async def test_h_on_a_home_topic_lists_each_of_its_questions(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "enter")
        await pilot.press(*keys_for(app, 0), "enter", "enter", "enter")
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("h")
        assert isinstance(app.screen, HistoryScreen)
        text = lines(app)
        assert "beta-choice" in text and "alpha-choice" not in text
        assert "practice  ✓ right  Good" in text and "picked: 4" in text
        await pilot.press("up", "escape", "up", "h")
        assert {"alpha-choice", "alpha-multi", "alpha-numeric", "alpha-free"} <= set(lines(app).split())


async def test_a_long_topic_title_leaves_the_heading_whole_at_80_columns(make_app, tmp_path):
    """The heading is one row: a topic's whole title ("…: linear attention, state spaces, …") cut
    it before "times in UTC". Home's short title fits, as in its table."""
    long_title = "Alpha: a small bank whose long title has details, details and more details"
    title_line = "title: Alpha — a small bank for the quiz app tests"
    app = make_app(banks=[edited_alpha_bank(tmp_path, {title_line: f'title: "{long_title}"'})])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("h")
        assert isinstance(app.screen, HistoryScreen)
        heading = app.screen.query_one("#history-heading")
        assert str(heading.content) == "History · Alpha · times in UTC"
        assert heading.content_size.width >= len(str(heading.content))
