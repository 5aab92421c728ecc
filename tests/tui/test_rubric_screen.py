"""The rubric screen shows the learner's answer and the whole model answer at any terminal size."""
from __future__ import annotations

import pytest

from free_answers import MODEL_ANSWER_END, long_answer_bank, on_screen, screen_text
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.rubric import RubricScreen

ANSWER = "Var(q.k) grows like d_k, so the scores are scaled back"


async def reach_rubric(pilot) -> None:
    await on_screen(pilot, QuestionScreen)
    await pilot.pause()  # the answer box takes focus once the screen is mounted
    await pilot.press(*ANSWER, "ctrl+s")
    await on_screen(pilot, RubricScreen)
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (60, 15)])
async def test_learner_answer_shows_and_the_model_answer_scrolls_to_its_end(make_app, tmp_path, size):
    app = make_app(banks=[long_answer_bank(tmp_path)], question="alpha-free")
    async with app.run_test(size=size) as pilot:
        await reach_rubric(pilot)
        opened = screen_text(app)
        assert "Your answer" in opened and "Var(q.k) grows like d_k" in opened
        assert MODEL_ANSWER_END not in opened  # too long to fit: it must be scrolled to
        for _ in range(12):
            if MODEL_ANSWER_END in screen_text(app):
                break
            await pilot.press("pagedown")
        assert MODEL_ANSWER_END in screen_text(app)
        await pilot.press("1")  # the checklist still ticks while the column is scrolled
        assert str(app.screen.query_one("#rubric-score").content) == "Score: 2 / 4 = 50%"
        await pilot.press("home")
        assert "Var(q.k) grows like d_k" in screen_text(app)


async def test_wide_terminal_puts_the_answers_side_by_side(make_app, tmp_path):
    app = make_app(banks=[long_answer_bank(tmp_path)], question="alpha-free")
    async with app.run_test(size=(160, 48)) as pilot:
        await reach_rubric(pilot)
        learner = app.screen.query_one("#learner-answer").region
        model = app.screen.query_one("#model-answer").region
        assert learner.y == model.y and learner.right < model.x
        assert MODEL_ANSWER_END in screen_text(app)
