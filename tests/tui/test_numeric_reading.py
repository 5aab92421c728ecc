"""Numbers read the way the question asks, in the app (issue 21, item 3): alpha-numeric asks in
GiB, so a bare number is GiB; bits are named; a negative size is refused before it is judged."""
from __future__ import annotations

from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen

SIZE = (80, 24)


async def reach_numeric(app, pilot):
    for _ in range(2):  # "don't know" on the two choice questions before it
        await pilot.press("ctrl+g", "enter")
    assert app.screen.showing.question.id == "alpha-numeric"
    return app.screen.showing.draw


def shown(app, selector: str) -> str:
    widget = app.screen.query_one(selector)
    return getattr(widget, "source", None) or str(widget.content)


async def test_a_bare_number_is_read_in_gib_and_judged_right(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        draw = await reach_numeric(app, pilot)
        typed = f"{draw.answer / 2**30:g}"
        assert "A bare number counts as GiB" in shown(app, ".hint")
        await pilot.press(*typed)
        assert shown(app, "#understood") == f"understood as {typed} GiB ({draw.answer:,} B)"
        await pilot.press("enter")
        assert isinstance(app.screen, FeedbackScreen) and shown(app, "#verdict") == "✓ Correct"
    with stored() as store:
        [answer] = store.answers(question_id="alpha-numeric")
    assert answer.correct and answer.response == typed


async def test_gibibits_are_read_as_bits_and_diagnosed(make_app):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        draw = await reach_numeric(app, pilot)
        await pilot.press(*f"{draw.answer / 2**30:g} Gib")
        assert "Gib means gibibits, 8 to a byte" in shown(app, "#understood")
        await pilot.press("enter")
        assert shown(app, "#verdict") == "✗ Not quite"
        assert "you wrote gibibits, and the question asks bytes" in shown(app, "#feedback")


async def test_a_negative_size_is_refused_and_nothing_recorded(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await reach_numeric(app, pilot)
        await pilot.press(*"-8 GiB")
        assert shown(app, "#understood") == "✗ '-8 GiB' is negative; a number of bytes cannot be"
        await pilot.press("enter")
        assert isinstance(app.screen, QuestionScreen)
    with stored() as store:
        assert store.answers(question_id="alpha-numeric") == []


async def test_an_answer_in_another_unit_is_read_back_in_the_questions_unit(make_app):
    # The expected answer is in GiB, as the question asks: so is what was understood, whatever
    # unit was typed, to compare the two at a glance (it read "512 MiB" against "0.5 GiB").
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        draw = await reach_numeric(app, pilot)
        await pilot.press(*f"{draw.answer / 2**20:g} MiB")
        in_gib = f"{draw.answer / 2**30:g} GiB ({draw.answer:,} B)"
        assert shown(app, "#understood") == f"understood as {in_gib}"
        await pilot.press("enter")
        assert f"understood as **{in_gib}**" in shown(app, "#feedback")
