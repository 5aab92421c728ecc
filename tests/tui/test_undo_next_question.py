"""Ctrl+Z on the question after an answer, as on Anki's next card: the answer before is taken
back and asked first, the question shown comes after it as it was left."""
from __future__ import annotations

from choices import keys_for
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.widgets.choice_picker import ChoicePicker

SIZE = (80, 24)


async def test_ctrl_z_on_the_next_question_takes_back_the_answer_before(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        first = app.screen.showing.question.id
        await pilot.press(*keys_for(app, 2), "enter")  # wrong
        assert isinstance(app.screen, FeedbackScreen)
        await pilot.press("n")
        await pilot.pause()
        second = app.screen.showing.question.id
        assert second != first
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen)
        assert (app.screen.showing.question.id, app.screen.showing.number) == (first, 1)
        assert app.screen.query_one(ChoicePicker).picked == {int(keys_for(app, 2)[0]) - 1}
        assert "What you picked last time is back" in str(app.screen.query_one("#answer-note").content)
        with stored() as store:
            assert store.answers() == [] and store.card(first) is None
        await pilot.press(*keys_for(app, 0), "enter", "n")  # answered right this time
        await pilot.pause()
        assert (app.screen.showing.question.id, app.screen.showing.number) == (second, 2)
    with stored() as store:
        assert [(a.question_id, a.correct) for a in store.answers()] == [(first, True)]


async def test_ctrl_z_on_the_first_question_says_there_is_nothing_to_undo(make_app, stored):
    app = make_app(question="alpha-numeric")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen)
        assert "Nothing to undo" in str(app.screen.query_one("#answer-note").content)
        await pilot.press(*"32 MB", "enter")
        assert isinstance(app.screen, FeedbackScreen)
    with stored() as store:
        assert len(store.answers()) == 1


async def test_ctrl_z_in_a_mock_round_leaves_the_answers_standing(make_app, stored):
    app = make_app(mode="mock", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+g")  # "Don't know": the next question at once, as in an interview
        await pilot.pause()
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert "mock interview's answers stand" in str(app.screen.query_one("#answer-note").content)
    with stored() as store:
        assert len(store.answers()) == 1


async def test_ctrl_z_in_an_empty_free_answer_takes_back_the_answer_before(make_app, stored):
    """Typing is undone first; with nothing typed, Ctrl+Z is the session's, as on the other kinds."""
    from textual.widgets import TextArea

    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        while app.screen.showing.question.kind != "free":
            await pilot.press("ctrl+g", "n")  # "Don't know", then on
            await pilot.pause()
        before = [a.question_id for a in stored().answers()]
        await pilot.press(*"ab", "ctrl+z")
        await pilot.pause()
        assert app.screen.query_one(TextArea).text == "" and isinstance(app.screen, QuestionScreen)
        assert [a.question_id for a in stored().answers()] == before  # only the typing was undone
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert app.screen.showing.question.id == before[-1]
    assert [a.question_id for a in stored().answers()] == before[:-1]
