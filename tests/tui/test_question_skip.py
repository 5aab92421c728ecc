""""I don't know / show me" (issue 13, item 7): Ctrl+G on a question records a wrong answer and
shows the feedback, for each kind of question."""
from __future__ import annotations

from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen

SIZE = (80, 24)


async def test_dont_know_records_a_wrong_answer_and_shows_the_explanation(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, QuestionScreen)
        assert "Don't know" in [b.binding.description for b in app.screen.active_bindings.values()]
        await pilot.press("ctrl+g")
        assert isinstance(app.screen, FeedbackScreen)
        assert app.screen.feedback.skipped
        assert "Var(q·k) = d_k" in app.screen.query_one("#feedback").source
    with stored() as store:
        [answer] = store.answers()
    assert (answer.question_id, answer.response, answer.correct) == ("alpha-choice", "", False)


async def test_dont_know_works_while_typing_a_number_or_a_free_response(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(2):  # the two choice questions
            await pilot.press("ctrl+g", "enter")
        assert app.screen.showing.question.id == "alpha-numeric"
        await pilot.press(*"12", "ctrl+g")
        assert isinstance(app.screen, FeedbackScreen) and app.screen.feedback.skipped
        await pilot.press("enter")
        assert app.screen.showing.question.id == "alpha-free"
        await pilot.press(*"not sure", "ctrl+g")
        assert isinstance(app.screen, FeedbackScreen) and app.screen.feedback.skipped
    with stored() as store:
        answers = {a.question_id: (a.response, a.correct) for a in store.answers()}
    assert answers["alpha-numeric"] == ("", False) and answers["alpha-free"] == ("", False)
