"""Keys typed in one burst with the Enter (or Ctrl+S) that hands an answer in: the answer is
what was typed before it, and the keys after it reach the next screen, as an Anki user's rating
key does (issue 32)."""
from __future__ import annotations

import pytest
from fsrs import Rating
from textual.widgets import TextArea

from choices import keys_for
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.rubric import RubricScreen
from quizprep.tui.widgets.choice_picker import ChoicePicker
from quizprep.tui.widgets.rubric_checklist import RubricChecklist
from test_mock_timer import start_mock
from test_screen_flow import type_now

SIZE = (80, 24)


async def settle(pilot) -> None:
    for _ in range(4):
        await pilot.pause()


async def test_a_rating_key_typed_after_enter_rates_the_number_it_followed(make_app, monkeypatch, stored):
    monkeypatch.setattr(FeedbackScreen, "ENTER_GUARD_S", 0.3)  # the guard as it ships
    app = make_app(question="alpha-numeric")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        type_now(app, "3", "2", "space", "G", "i", "B", "enter", "4")
        await settle(pilot)
        assert isinstance(app.screen, FeedbackScreen)
        assert app.screen.feedback.response == "32 GiB"
        assert app.screen.feedback.rating == Rating.Easy
    [answer] = stored().answers(question_id="alpha-numeric")
    assert answer.response == "32 GiB"


async def test_a_rating_key_typed_after_a_pick_and_enter_rates_it(make_app, monkeypatch):
    monkeypatch.setattr(FeedbackScreen, "ENTER_GUARD_S", 0.3)
    app = make_app(question="alpha-choice")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        type_now(app, *keys_for(app, 1), "enter", "4")  # a wrong pick, rated Easy all the same
        await settle(pilot)
        assert isinstance(app.screen, FeedbackScreen)
        assert app.screen.feedback.picked == frozenset({1})
        assert app.screen.feedback.rating == Rating.Easy


async def test_a_digit_typed_after_n_reaches_the_next_question_with_the_guard_on(make_app, monkeypatch):
    monkeypatch.setattr(FeedbackScreen, "ENTER_GUARD_S", 0.3)
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        type_now(app, *keys_for(app, 0), "enter", "n", "2")
        await settle(pilot)
        assert isinstance(app.screen, QuestionScreen), app.screen
        assert app.screen.showing.question.id == "alpha-multi"
        assert app.screen.query_one(ChoicePicker).picked == {app.screen.showing.choice_order[1]}


async def test_number_keys_typed_after_ctrl_s_tick_the_rubric(make_app):
    app = make_app(question="alpha-free")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        type_now(app, *"qk-norm", "ctrl+s", "1", "2")
        await settle(pilot)
        assert isinstance(app.screen, RubricScreen)
        assert app.screen.pending.response == "qk-norm"
        assert app.screen.query_one(RubricChecklist).met == frozenset({0, 1})


@pytest.mark.parametrize("after_enter, next_answer", [
    (("q", "k"), "qk"),
    # issue 32, item 4: Backspace typed in the same burst as the keys after Enter
    (("q", "x", "backspace", "k", "-", "m", "backspace", "n"), "qk-n"),
])
async def test_keys_typed_after_enter_in_a_mock_round_start_the_next_answer(make_app, stored, after_enter,
                                                                             next_answer):
    app = make_app(topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await start_mock(app, pilot, "alpha-numeric")  # alpha-free comes next in this draw
        type_now(app, "3", "2", "enter", *after_enter)
        await settle(pilot)
        assert app.screen.showing.question.id == "alpha-free"
        assert app.screen.query_one(TextArea).text == next_answer
    [answer] = stored().answers(question_id="alpha-numeric")
    assert answer.response == "32"


@pytest.mark.parametrize("after_enter, answer", [
    (("2", "space", "G", "i", "B", "enter"), "32*2 GiB"),
    (("backspace", "backspace", "4", "enter"), "34"),  # edited in the order typed
])
async def test_keys_typed_after_a_refused_enter_go_on_in_the_field(make_app, after_enter, answer):
    app = make_app(question="alpha-numeric")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        type_now(app, "3", "2", "*", "enter", *after_enter)  # "32*" is no number
        await settle(pilot)
        assert isinstance(app.screen, FeedbackScreen)
        assert app.screen.feedback.response == answer


async def test_keys_typed_after_the_key_that_starts_a_session_reach_its_first_question(make_app, stored):
    """`p` then at once the answer: the keys waited for the first question's screen instead of
    reaching Home, which dropped them, while the first session of a run was being built."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        type_now(app, "p", "2", "enter")
        await settle(pilot)
        assert isinstance(app.screen, FeedbackScreen), app.screen
        given = app.screen.feedback
        assert given.question.kind == "choice"  # the first of alpha, which `p` practises
        assert given.picked == frozenset({given.showing.choice_order[1]})  # the second one shown
    assert len(stored().answers()) == 1


@pytest.mark.parametrize("enter", ["enter", "ctrl+j"])
async def test_keys_typed_before_homes_table_has_the_focus_reach_the_first_question(make_app, stored, enter):
    """Typed while `quizprep` starts, the keys can come before Home's mount has focused its table:
    the key started the session and the answer typed after it reached Home, which dropped it.
    Typed before Textual takes the terminal, from its line mode, Enter arrives as Ctrl+J."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.screen.set_focus(None)  # as before Home's on_mount
        type_now(app, "p", "2", enter)
        await settle(pilot)
        assert isinstance(app.screen, FeedbackScreen), app.screen
        given = app.screen.feedback
        assert given.picked == frozenset({given.showing.choice_order[1]})
    assert len(stored().answers()) == 1


async def test_keys_typed_after_a_session_key_with_nothing_to_ask_go_back_to_home(make_app):
    """Review with nothing due starts nothing: the `p` typed after `r` practises."""
    from quizprep.tui.screens.question import QuestionScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        type_now(app, "r", "p")
        await settle(pilot)
        assert isinstance(app.screen, QuestionScreen), app.screen
        assert app.screen.session.mode == "practice"
