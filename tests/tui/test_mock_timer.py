"""The mock round's clock: what was typed when time runs out is kept, a warning comes at two
minutes, and Esc asks before it ends the round."""
from __future__ import annotations

from free_answers import on_screen
from quizprep.tui.screens.confirm import ConfirmScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.report import ReportScreen
from quizprep.tui.screens.rubric import RubricScreen

SIZE = (80, 24)
TICK_S = 0.7  # the timer looks at the clock twice a second


async def start_mock(app, pilot, question_id: str) -> None:
    """Open an alpha mock round and answer with 1 until `question_id` is shown."""
    await pilot.press("m")
    await on_screen(pilot, QuestionScreen)
    while app.screen.showing.question.id != question_id:
        if app.screen.showing.question.kind == "numeric":
            await pilot.press(*"1 GiB", "enter")
        else:
            await pilot.press("1", "enter")
        await pilot.pause()
    await pilot.pause()


async def time_runs_out(clock, pilot) -> None:
    clock.advance(minutes=21)
    await pilot.pause(TICK_S)


async def test_a_half_typed_free_answer_is_saved_when_time_runs_out(make_app, clock, stored):
    app = make_app(topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await start_mock(app, pilot, "alpha-free")
        await pilot.press(*"scores grow like d_k and then")
        await time_runs_out(clock, pilot)
        await on_screen(pilot, RubricScreen)  # the answer counts: assess it now or later
        assert str(app.screen.query_one("#learner-answer").content) == "scores grow like d_k and then"
        await pilot.press("escape")
        await on_screen(pilot, ReportScreen)
        report = app.screen.query_one("#report").source
        assert "**Time ran out**" in report and "*(alpha-free)*" in report
    with stored() as store:
        [pending] = store.unassessed()
    assert (pending.question_id, pending.response, pending.mode) == ("alpha-free", "scores grow like d_k and then",
                                                                    "mock")


async def test_a_picked_choice_is_saved_when_time_runs_out(make_app, clock, stored):
    app = make_app(topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await start_mock(app, pilot, "alpha-multi")
        await pilot.press("2")  # picked, Enter not pressed yet
        await time_runs_out(clock, pilot)
        await on_screen(pilot, ReportScreen)
    with stored() as store:
        [answer] = store.answers()
    assert answer.question_id == "alpha-multi" and answer.response != ""


async def test_an_unreadable_number_is_reported_not_answered_and_a_readable_one_is_saved(make_app, clock,
                                                                                         stored):
    for typed, saved in [("12 parsecs", False), ("2 GiB", True)]:
        app = make_app(topics=["alpha"])
        async with app.run_test(size=SIZE) as pilot:
            await start_mock(app, pilot, "alpha-numeric")
            # The unread number of the first round comes back as a draft in the second.
            assert app.screen.query_one("#answer").text == ("" if not saved else "12 parsecs")
            await pilot.press("ctrl+u", *typed)
            await time_runs_out(clock, pilot)
            await on_screen(pilot, ReportScreen)
            report = app.screen.query_one("#report").source
            not_answered = report.split("### Not answered")[-1]
            assert ("*(alpha-numeric)*" in not_answered) is not saved
            if not saved:
                # What was there, not instructions for a try that will not come ("try e.g.").
                assert ("alpha-numeric was not answered: '12 parsecs' could not be read as a number. What you "
                        "typed is kept as its draft.") in [n.message for n in app._notifications]
        with stored() as store:
            responses = [a.response for a in store.answers(question_id="alpha-numeric")]
        assert (typed in responses) is saved
        clock.advance(days=1)


async def test_two_minutes_left_is_said_once_and_the_timer_changes_colour(make_app, clock):
    app = make_app(topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await start_mock(app, pilot, "alpha-multi")
        clock.advance(minutes=17)
        await pilot.pause(TICK_S)
        assert not app.screen.query_one("#timer").has_class("-warn")
        clock.advance(minutes=1, seconds=1)
        await pilot.pause(TICK_S)
        assert app.screen.query_one("#timer").has_class("-warn")
        await pilot.press("1", "enter")  # the next question's timer is also below two minutes
        await on_screen(pilot, QuestionScreen)
        await pilot.pause(TICK_S)
        warnings = [n.message for n in app._notifications if "Two minutes left" in n.message]
        assert warnings == ["Two minutes left in this round."]


async def test_a_round_of_two_minutes_or_less_opens_without_the_warning(make_app, clock):
    app = make_app(topics=["alpha"], minutes=2)
    async with app.run_test(size=SIZE) as pilot:
        await start_mock(app, pilot, "alpha-multi")
        await pilot.pause(TICK_S)
        assert app.screen.query_one("#timer").has_class("-warn")
        assert not [n for n in app._notifications if "Two minutes left" in n.message]


async def ask_to_end(app, pilot) -> None:
    await start_mock(app, pilot, "alpha-multi")
    await pilot.press("escape")
    await on_screen(pilot, ConfirmScreen)


async def test_escape_asks_before_ending_the_round(make_app, clock):
    app = make_app(topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await ask_to_end(app, pilot)
        await pilot.press("enter")  # "keep going" has the focus
        await on_screen(pilot, QuestionScreen)
        assert app.screen.showing.question.id == "alpha-multi"
        await pilot.press("escape", "n")
        await on_screen(pilot, QuestionScreen)
        await pilot.press("escape", "y")
        await on_screen(pilot, ReportScreen)


async def test_time_running_out_while_asked_to_confirm_ends_the_round(make_app, clock):
    app = make_app(topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await ask_to_end(app, pilot)
        await time_runs_out(clock, pilot)
        await on_screen(pilot, ReportScreen)
        assert len(app.screen_stack) == 2  # Home under the report; no question left behind


async def test_time_up_with_nothing_picked_says_so_without_how_to_pick(make_app, clock):
    app = make_app(topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await start_mock(app, pilot, "alpha-multi")
        await time_runs_out(clock, pilot)
        await on_screen(pilot, ReportScreen)
        said = [n.message for n in app._notifications if n.title == "Time is up"]
    assert said == ["alpha-multi was not answered: nothing was picked."]
