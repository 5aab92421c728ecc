"""What the learner needs stays in view without scrolling: the feedback's rating and next review
under a long explanation, and the choice picked when the terminal shrinks mid-question (a user
review at 100×30 and 60×18: the interval needed End, and the pick scrolled out of view)."""
from __future__ import annotations

from free_answers import on_screen, screen_text
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen

SMALL = (60, 18)


async def test_the_next_review_shows_under_an_explanation_taller_than_the_screen(make_app):
    app = make_app(question="alpha-numeric")
    async with app.run_test(size=SMALL) as pilot:
        await on_screen(pilot, QuestionScreen)
        await pilot.press("ctrl+g")  # Don't know: the worked computation and the explanation
        await on_screen(pilot, FeedbackScreen)
        await pilot.pause()
        body = app.screen.query_one("#feedback-body")
        assert body.max_scroll_y > 0 and body.scroll_y == 0  # it does not fit, and opens at its top
        assert "Rated Again; next review in 10 min." in screen_text(app)
        await pilot.press("3")  # rated by hand: the line follows
        await pilot.pause()
        assert "Rated Good; next review in" in screen_text(app)


async def test_a_pick_stays_in_view_as_the_terminal_shrinks(make_app):
    app = make_app(question="alpha-choice")
    async with app.run_test(size=(100, 30)) as pilot:
        await on_screen(pilot, QuestionScreen)
        last = len(app.screen.showing.choice_order)
        await pilot.press(str(last))
        await pilot.resize_terminal(60, 12)  # alpha-choice's prompt is shorter than the banks' at 60×18
        await pilot.pause()
        await pilot.pause()
        body = app.screen.query_one("#question-body")
        assert body.max_scroll_y > 0  # the prompt and the choices no longer fit
        assert body.region.contains_region(app.screen.query(".choice")[last - 1].region)

