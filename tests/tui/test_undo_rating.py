"""On the feedback: 1–4 rate the answer by hand (Again, Hard, Good, Easy) and Ctrl+Z takes the
answer back to ask the question again."""
from __future__ import annotations

from fsrs import Rating

from choices import keys_for
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen

SIZE = (80, 24)


async def test_a_rating_key_overrides_the_verdicts_rating(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*keys_for(app, 2), "enter")  # wrong: rated Again
        assert "Rated Again" in app.screen.query_one("#feedback").source
        await pilot.press("3")
        assert isinstance(app.screen, FeedbackScreen)
        assert "Rated Good" in app.screen.query_one("#feedback").source
    with stored() as store:
        assert [a.rating for a in store.answers()] == [Rating.Good]
        assert store.card("alpha-choice").last_review is not None


async def test_rating_keys_are_not_offered_in_cram(make_app, stored):
    app = make_app(mode="cram", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*keys_for(app, 2), "enter")
        await pilot.press("4")
    with stored() as store:
        assert [a.rating for a in store.answers()] == [None]


async def test_ctrl_z_takes_the_answer_back_and_asks_again(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*keys_for(app, 2), "enter")
        await pilot.press("ctrl+z")
        assert isinstance(app.screen, QuestionScreen)
        assert (app.screen.showing.question.id, app.screen.showing.number) == ("alpha-choice", 1)
        with stored() as store:
            assert store.answers() == [] and store.card("alpha-choice") is None
        await pilot.press(*keys_for(app, 0), "enter")
        assert app.screen.query_one("#verdict").content == "✓ Correct"
    with stored() as store:
        assert [(a.response, a.correct) for a in store.answers()] == [("1", True)]
