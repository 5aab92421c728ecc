"""After a mock round the report opens a debrief: each answer in turn, with the worked
solution, the explanation and the rubric items missed."""
from __future__ import annotations

from choices import keys_for
from free_answers import on_screen
from quizprep.tui.screens.debrief import DebriefScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.report import ReportScreen
from quizprep.tui.screens.rubric import RubricScreen

SIZE = (80, 24)
FREE_ANSWER = "Var(q.k) = d_k, so divide by sqrt(d_k)"


async def answer_the_whole_round(app, pilot) -> list[str]:
    """Answer every question of an alpha mock round; the ids in the order asked."""
    await pilot.press("m")
    asked = []
    while True:
        await on_screen(pilot, (QuestionScreen, ReportScreen))
        if isinstance(app.screen, ReportScreen):
            return asked
        await pilot.pause()
        question = app.screen.showing.question
        asked.append(question.id)
        if question.kind == "numeric":
            await pilot.press(*"1 GiB", "enter")
        elif question.kind == "free":
            await pilot.press(*FREE_ANSWER, "ctrl+s")
            await on_screen(pilot, RubricScreen)
            await pilot.press("1", "enter")
        else:
            await pilot.press("1", "enter")
        await pilot.pause()


def page(app) -> str:
    screen = app.screen
    title = str(screen.query_one("#debrief-title").content)
    answer = str(screen.query_one("#debrief-answer").content) if screen.query_one("#debrief-answer").display else ""
    return "\n".join([title, str(screen.query_one("#verdict").content), screen.query_one("#debrief-prompt").source,
                      answer, screen.query_one("#debrief-detail").source])


async def test_the_debrief_steps_through_every_answer_of_the_round(make_app):
    app = make_app(topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        asked = await answer_the_whole_round(app, pilot)
        await pilot.press("d")
        await on_screen(pilot, DebriefScreen)
        pages = {}
        for number, question_id in enumerate(asked, start=1):
            shown = page(app)
            assert shown.startswith(f"Answer {number} of {len(asked)} · {question_id}")
            pages[question_id] = shown
            await pilot.press("right")
        assert page(app) == pages[asked[-1]]  # the last answer: nothing further
        assert all(shown.endswith(("*Rated Again.*", "*Rated Good.*", "*Rated Hard.*", "*Rated Easy.*"))
                   for shown in pages.values()), pages  # what the schedule took from each answer
        numeric = pages["alpha-numeric"]
        assert "**You answered** `1 GiB`" in numeric and "### Worked computation" in numeric
        assert "per_token × seq = 131,072 ×" in numeric and "Both K and V are cached" in numeric
        free = pages["alpha-free"]
        assert FREE_ANSWER in free and "### Model answer" in free
        assert "### Rubric items missed\n\n- mentions softmax saturation\n- mentions vanishing gradients" in free
        choice = pages["alpha-choice"]
        assert "(your pick)" in choice and "### Explanation" in choice
        await pilot.press("left")
        assert page(app) == pages[asked[-2]]
        await pilot.press("escape")
        await on_screen(pilot, ReportScreen)


async def answer_right(app, pilot) -> None:
    """Hand in the right answer to the question shown (a free one with every rubric item met)."""
    showing = app.screen.showing
    question = showing.question
    if question.kind == "choice":
        await pilot.press(*keys_for(app, *sorted(question.correct_indices)), "enter")
    elif question.kind == "numeric":
        await pilot.press(*str(showing.draw.answer), "enter")
    else:
        await pilot.press(*FREE_ANSWER, "ctrl+s")
        await on_screen(pilot, RubricScreen)
        await pilot.press(*(str(n) for n in range(1, len(question.rubric) + 1)), "enter")


async def test_a_round_ended_early_is_scored_over_all_its_questions(make_app):
    """Answered 3 of 8, then Esc: the report said "100% over 3 answers", as if the round were done."""
    app = make_app(topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        await on_screen(pilot, QuestionScreen)
        await pilot.pause()
        size = app.screen.session.total
        await answer_right(app, pilot)
        while not (isinstance(app.screen, QuestionScreen) and app.screen.showing.number == 2):
            await pilot.pause(0.02)
        await pilot.pause()
        await pilot.press("escape", "y")  # "End the mock interview now?"
        await on_screen(pilot, ReportScreen)
        text = app.screen.query_one("#report").source
    assert size > 2
    assert text.startswith(f"## Mock interview: {1 / size:.0%} (1 of {size} answered, all right) in 0:00")
