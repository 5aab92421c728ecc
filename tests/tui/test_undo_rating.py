"""On the feedback: 1–4 rate the answer by hand (Again, Hard, Good, Easy) and Ctrl+Z takes the
answer back to ask the question again."""
from __future__ import annotations

from fsrs import Rating
from textual.widgets import Input

from choices import keys_for
from free_answers import footer_text
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.widgets.choice_picker import ChoicePicker
from quizprep.tui.widgets.free_answer import FreeAnswer
from quizprep.tui.widgets.rubric_checklist import RubricChecklist

SIZE = (80, 24)


def review_text(app) -> str:
    return str(app.screen.query_one("#review-line").content)


async def answer_free_and_assess(app, pilot) -> None:
    """Hand in a free response and tick the rubric's first item: the feedback follows."""
    await pilot.pause()
    await pilot.press(*"Var grows with d_k", "ctrl+s")
    await pilot.pause()
    await pilot.press("1", "enter")
    assert isinstance(app.screen, FeedbackScreen)


async def assess_then_take_back_to_the_rubric(app, pilot) -> None:
    """Tick the rubric's first item, take the answer back (Ctrl+Z) and hand it in again: its
    rubric is up, as the ticks came back."""
    await answer_free_and_assess(app, pilot)
    await pilot.press("ctrl+z")
    await pilot.pause()
    await pilot.press("ctrl+s")
    await pilot.pause()


async def test_a_rating_key_overrides_the_verdicts_rating(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*keys_for(app, 2), "enter")  # wrong: rated Again
        assert "Rated Again" in review_text(app)
        await pilot.press("3")
        assert isinstance(app.screen, FeedbackScreen)
        assert "Rated Good" in review_text(app)
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


async def test_ctrl_z_on_a_free_answer_brings_back_what_was_typed(make_app):
    """Taken back to answer again, a free response is not typed again from nothing."""
    app = make_app(question="alpha-free")
    async with app.run_test(size=SIZE) as pilot:
        await answer_free_and_assess(app, pilot)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen)
        assert app.screen.query_one(FreeAnswer).text == "Var grows with d_k"


async def test_ctrl_z_on_a_number_asks_the_same_numbers_with_the_number_typed(make_app):
    app = make_app(question="alpha-numeric")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        prompt = app.screen.showing.prompt
        await pilot.press("3", "2", "space", "M", "B", "enter")
        assert isinstance(app.screen, FeedbackScreen)
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen)
        assert app.screen.showing.prompt == prompt  # a typo in the unit is fixed, not a new sum done
        assert app.screen.query_one(Input).value == "32 MB"


async def test_the_footer_offers_rating_and_undo_and_fits_80_columns_after_a_free_answer(make_app):
    """Anki users look for 1–4 and undo at the bottom, not at the end of a long feedback."""
    app = make_app(question="alpha-free")
    async with app.run_test(size=SIZE) as pilot:
        await answer_free_and_assess(app, pilot)
        await pilot.pause()
        footer = footer_text(app)
        assert "1234 Rate" in footer and "^z Undo" in footer and "e Edit score" in footer
        assert "h History" in footer and "f1 Help" in footer  # help: the one key that works everywhere
        assert footer.endswith("^f Flag"), footer  # nothing cut at 80 columns


async def test_cram_offers_no_rating_keys_in_the_footer(make_app):
    app = make_app(mode="cram", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*keys_for(app, 2), "enter")
        await pilot.pause()
        assert "Rate" not in footer_text(app)


async def test_ctrl_z_on_a_choice_brings_back_what_was_picked_ready_to_change(make_app, stored):
    """As a typed answer comes back as its draft, a pick comes back picked (issue 32, item 3)."""
    app = make_app(question="alpha-multi")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press(*keys_for(app, 0, 2), "enter")
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen)
        assert app.screen.query_one(ChoicePicker).picked == {0, 2}
        assert "■" in app.screen.query(".choice-mark")[int(keys_for(app, 0)[0]) - 1].render().plain
        await pilot.press(*keys_for(app, 2), "enter")  # changed: the third one unpicked
    with stored() as store:
        assert [a.response for a in store.answers()] == ["1"]


async def test_ctrl_z_clears_the_notes_about_the_answer_taken_back(make_app):
    """Rated, then undone in a burst: "Rating changed" spoke of an answer that is gone, and stood
    over the field the answer came back to."""
    app = make_app(question="alpha-numeric")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press(*"32 MB", "enter", "3", "ctrl+z")
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen)
        assert not app._notifications  # what came back is said under the field
        assert "What you typed last time is back" in str(app.screen.query_one("#answer-note").content)


async def test_ctrl_z_on_a_free_answer_brings_back_its_rubric_ticks_too(make_app, stored):
    """All that was entered comes back: the text, then the ticks, ready to change."""
    app = make_app(question="alpha-free")
    async with app.run_test(size=SIZE) as pilot:
        await assess_then_take_back_to_the_rubric(app, pilot)
        assert app.screen.query_one(RubricChecklist).met == {0}
        await pilot.press("2", "enter")  # one more ticked
        assert isinstance(app.screen, FeedbackScreen)
    with stored() as store:
        [answer] = store.answers()
    assert answer.score == 0.75  # the first two criteria met: weights 2 and 1 of 4
