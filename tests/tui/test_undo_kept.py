"""What Ctrl+Z brings back (a choice's picks in their order, a free answer's text and rubric
ticks) is kept as the question's draft: Esc right after the undo, or a new run, loses none of it.
A pick made and not handed in is kept as a typed answer is."""
from __future__ import annotations

import json

from choices import keys_for
from test_undo_rating import answer_free_and_assess, assess_then_take_back_to_the_rubric
from quizprep.tui.screens.confirm import ConfirmScreen
from quizprep.tui.screens.question import DRAFT_DELAY_S, QuestionScreen
from quizprep.tui.screens.rubric import RubricScreen
from quizprep.tui.widgets.choice_picker import ChoicePicker
from quizprep.tui.widgets.rubric_checklist import RubricChecklist

SIZE = (80, 24)


async def asked(app, pilot) -> QuestionScreen:
    while not isinstance(app.screen, QuestionScreen):
        await pilot.pause()
    return app.screen


async def test_a_pick_brought_back_by_ctrl_z_survives_esc_right_after(make_app):
    app = make_app(question="alpha-multi")
    async with app.run_test(size=SIZE) as pilot:
        await asked(app, pilot)
        order = app.screen.showing.choice_order
        await pilot.press(*keys_for(app, 0, 2), "enter", "ctrl+z", "escape")
        await pilot.pause()
    again = make_app(question="alpha-multi", seed=8)  # another seed would shuffle the choices otherwise
    async with again.run_test(size=SIZE) as pilot:
        screen = await asked(again, pilot)
        assert screen.showing.choice_order == order
        assert screen.query_one(ChoicePicker).picked == {0, 2}
        await pilot.press("enter")
        assert again.screen.query_one("#verdict").content.startswith("✗")  # {0, 2} is not the answer


async def test_rubric_ticks_brought_back_by_ctrl_z_survive_esc_right_after(make_app):
    app = make_app(question="alpha-free")
    async with app.run_test(size=SIZE) as pilot:
        await answer_free_and_assess(app, pilot)  # the first criterion ticked
        await pilot.press("ctrl+z", "escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)  # the text is a draft: leave it?
        await pilot.press("y")
        await pilot.pause()
    again = make_app(question="alpha-free")
    async with again.run_test(size=SIZE) as pilot:
        await asked(again, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert again.screen.query_one(RubricChecklist).met == {0}


async def test_a_pick_not_handed_in_is_kept_as_a_draft(make_app, stored):
    app = make_app(question="alpha-choice")
    async with app.run_test(size=SIZE) as pilot:
        await asked(app, pilot)
        order = app.screen.showing.choice_order
        await pilot.press(*keys_for(app, 1))
        await pilot.pause(DRAFT_DELAY_S + 0.2)
        with stored() as store:  # in the store before the app ends: a kill -9 would keep it
            assert json.loads(store.draft_marks("alpha-choice")) == {"choice_order": list(order), "picked": [1]}
        await pilot.press(*keys_for(app, 2), "enter")
    with stored() as store:  # answered: the draft goes
        assert store.draft_marks("alpha-choice") == ""
        assert [a.response for a in store.answers()] == ["3"]


async def left_over_rubric(make_app):
    """The rubric the next run offers first, as it opens."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        while not isinstance(app.screen, RubricScreen):
            await pilot.pause()
        await pilot.pause()
        yield app, pilot


async def test_ticks_of_a_rubric_left_for_later_come_back_with_it(make_app, stored):
    """Ctrl+Z brought the ticks back, Esc on the rubric left it for later: the next run offered
    it unticked (found walking the app in tmux)."""
    app = make_app(question="alpha-free")
    async with app.run_test(size=SIZE) as pilot:
        await assess_then_take_back_to_the_rubric(app, pilot)
        await pilot.press("2", "escape")  # one more ticked, then later
        await pilot.pause()
    async for again, pilot in left_over_rubric(make_app):
        assert again.screen.query_one(RubricChecklist).met == {0, 1}
        await pilot.press("enter")
        await pilot.pause()
    with stored() as store:
        assert [a.score for a in store.answers()] == [0.75] and store.draft_marks("alpha-free") == ""
