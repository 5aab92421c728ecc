"""Screen changes within a session: the next screen replaces the current one (Home never shows
in between), keys typed during a change reach the next question, and a double Enter cannot
skip the feedback."""
from __future__ import annotations

from textual import events
from textual.widgets import Input

from choices import keys_for
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.report import ReportScreen

SIZE = (80, 24)


def type_now(app, *keys: str) -> None:
    """Queue keys at once, as fast typing does: no waiting for the app between them."""
    for key in keys:
        app.post_message(events.Key(key, " " if key == "space" else key if len(key) == 1 else None))


async def test_home_never_becomes_the_active_screen_during_a_session(make_app):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        seen: list[type] = []
        app.screen_change_signal.subscribe(app, lambda screen: seen.append(type(screen)))
        await pilot.press(*keys_for(app, 0), "enter")  # question -> feedback
        await pilot.press("enter")  # feedback -> question
        await pilot.press(*keys_for(app, 0), "enter")
        await pilot.press("escape")  # feedback -> report
        assert isinstance(app.screen, ReportScreen)
        await pilot.press("enter")  # report -> Home
    assert seen == [FeedbackScreen, QuestionScreen, FeedbackScreen, ReportScreen, HomeScreen]


async def test_keys_typed_right_after_next_reach_the_next_question(make_app):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*keys_for(app, 0), "enter")  # alpha-choice
        await pilot.press("enter")
        await pilot.press(*keys_for(app, 0, 1), "enter")  # alpha-multi
        assert isinstance(app.screen, FeedbackScreen)
        type_now(app, "enter", "3", "2", "space", "G", "i", "B")  # Next, then the answer at once
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen)
        assert app.screen.showing.question.id == "alpha-numeric"
        assert app.screen.query_one(Input).value == "32 GiB"


async def test_an_enter_typed_during_the_change_does_not_skip_the_feedback(make_app, monkeypatch):
    monkeypatch.setattr(FeedbackScreen, "ENTER_GUARD_S", 0.3)
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        type_now(app, *keys_for(app, 0), "enter", "enter")  # a double Enter on the answer
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, FeedbackScreen)
        await pilot.press("n")  # the explicit key always goes on
        assert isinstance(app.screen, QuestionScreen)


async def test_a_question_is_drawn_complete_in_its_first_frame(make_app):
    """The answer field is focused before the first frame, so the footer shows Submit at once
    instead of the screen's keys alone for a frame (issue 21)."""
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        frames: list[tuple[object, list[str]]] = []
        display = app._display

        def recording(screen, renderable) -> None:
            if renderable is not None:
                frames.append((screen, [strip.text for strip in screen._compositor.render_strips()]))
            display(screen, renderable)

        app._display = recording
        for answer in ((0,), (0, 1)):
            await pilot.press(*keys_for(app, *answer), "enter")
            frames.clear()
            await pilot.press("enter")  # feedback -> the next question
            await pilot.pause()
            question = [cells for screen, cells in frames if screen is app.screen]
            assert isinstance(app.screen, QuestionScreen)
            assert "Submit" in question[0][-1], question[0][-1]
            assert question[0] == question[-1]


async def test_a_double_enter_on_a_number_answers_it_once(make_app, stored, monkeypatch):
    """Both Enters of a fast double Enter come before the feedback is in: the second must not
    answer the question again (it raised "already answered"), nor skip the feedback."""
    monkeypatch.setattr(FeedbackScreen, "ENTER_GUARD_S", 0.3)
    app = make_app(question="alpha-numeric")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        type_now(app, "3", "2", "space", "G", "i", "B", "enter", "enter")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, FeedbackScreen)
    assert len(stored().answers(question_id="alpha-numeric")) == 1
