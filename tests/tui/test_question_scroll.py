"""A question too long for the terminal opens at the top of its prompt, where what is asked is
said; the answer comes into view as the learner answers."""
from __future__ import annotations

from free_answers import on_screen, screen_text
from quizprep.tui.screens.question import QuestionScreen

SHORT = (80, 12)  # too short for alpha-choice's prompt (with its code) and its choices at once
STEM = "Why is softmax(QKᵀ/√d_k) scaled by 1/√d_k?"


async def test_a_long_choice_question_opens_at_its_prompt_and_picking_shows_the_choice(make_app):
    app = make_app(question="alpha-choice")
    async with app.run_test(size=SHORT) as pilot:
        await on_screen(pilot, QuestionScreen)
        await pilot.pause()
        body = app.screen.query_one("#question-body")
        assert body.max_scroll_y > 0  # it does not fit
        assert body.scroll_y == 0 and STEM in screen_text(app)
        order = app.screen.showing.choice_order
        last = len(order)
        await pilot.press(str(last))
        await pilot.pause()
        assert app.screen.query(".choice")[last - 1].region.bottom <= body.region.bottom


async def test_a_number_typed_below_the_edge_brings_its_field_into_view(make_app):
    app = make_app(question="alpha-numeric")
    async with app.run_test(size=(40, 9)) as pilot:
        await on_screen(pilot, QuestionScreen)
        await pilot.pause()
        body = app.screen.query_one("#question-body")
        assert body.scroll_y == 0 and "KV cache in bf16" in screen_text(app)
        await pilot.press("3", "2")
        await pilot.pause()
        field = app.screen.query_one("#numeric-input")
        assert body.region.contains_region(field.region)
        assert field.value == "32"
