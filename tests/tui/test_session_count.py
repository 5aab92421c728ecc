"""The question bar counts a session as Anki counts new and relearning cards apart: a miss adds
one to ask again ("2 again"), never to the questions planned (issue 32, item 9: it read 1/5
then 3/7 as misses were queued again)."""
from __future__ import annotations

from textual.widgets import Static

from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen

SIZE = (100, 30)


def counter(app) -> str:
    meta = str(app.screen.query_one("#question-meta", Static).content)
    return meta.split(" · ")[0] + ("" if "again" not in meta else " · " + meta.split(" · ")[1])


async def test_the_count_stays_put_as_misses_are_queued_to_ask_again(make_app):
    app = make_app(mode="practice")  # the default length: every question of the test banks
    seen = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        while isinstance(app.screen, QuestionScreen):
            seen.append(counter(app))
            await pilot.press("ctrl+g")  # Don't know: a miss, asked again at the end
            await pilot.pause()
            assert isinstance(app.screen, FeedbackScreen)
            await pilot.press("enter")
            await pilot.pause()
    assert seen == ["Practice 1/5", "Practice 2/5 · 1 again", "Practice 3/5 · 2 again", "Practice 4/5 · 3 again",
                    "Practice 5/5 · 4 again", *(f"Practice 5/5 · again {n}/5" for n in range(1, 6))]


async def test_a_length_counts_its_questions_and_the_misses_come_on_top(make_app):
    """`--length 10` read "Practice 2/10", then "3/9 · 1 again" after a miss (and "9/9" twice):
    the miss asked again took the tenth question's place."""
    app = make_app(mode="practice", length=3)
    seen = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        while isinstance(app.screen, QuestionScreen):
            seen.append(counter(app))
            await pilot.press("ctrl+g")
            await pilot.pause()
            await pilot.press("enter")
            await pilot.pause()
    assert seen == ["Practice 1/3", "Practice 2/3 · 1 again", "Practice 3/3 · 2 again",
                    *(f"Practice 3/3 · again {n}/3" for n in range(1, 4))]
