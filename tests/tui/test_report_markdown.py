"""Bank Markdown on the feedback and rubric screens is rendered, not shown as marks; feedback
numbers the choices as they were shown; a skipped question still gets its worked answer."""
from __future__ import annotations

import random
from datetime import datetime, timezone

from free_answers import DATA, edited_alpha_bank, on_screen
from quizprep.bank import load_banks
from quizprep.study.builders import practice
from quizprep.study.store import Store
from quizprep.tui.screens.feedback import FeedbackScreen, feedback_markdown
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.rubric import RubricScreen

SIZE = (100, 40)
NOW = datetime(2025, 3, 10, 9, 0, tzinfo=timezone.utc)


def bold_words(app, row_holding: str) -> tuple[str, set[str]]:
    """The screen row that holds `row_holding`, and the words on it drawn in bold."""
    for strip in app.screen._compositor.render_strips():
        if row_holding in strip.text:
            return strip.text, {word for segment in strip if segment.style and segment.style.bold
                                for word in segment.text.split()}
    raise AssertionError(f"no row shows {row_holding!r}")


async def test_a_choice_with_its_own_emphasis_reads_as_written_in_the_feedback(make_app, tmp_path):
    bank = edited_alpha_bank(tmp_path, {"- text: To save FLOPs": "- text: To save FLOPs, **not** accuracy"})
    app = make_app(banks=[bank], question="alpha-choice")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, QuestionScreen)
        await pilot.press("1", "enter")
        await on_screen(pilot, FeedbackScreen)
        await pilot.pause()
        row, bold = bold_words(app, "accuracy")
        assert "**" not in row and "To save FLOPs, not accuracy" in row
        assert "not" in bold and "accuracy" not in bold


async def test_feedback_numbers_the_choices_as_they_were_shown(make_app):
    app = make_app(question="alpha-choice", seed=5)
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, QuestionScreen)
        order = app.screen.showing.choice_order
        assert order[0] != 0  # this seed moves another choice first: the test means something
        first = app.screen.showing.question.choices[order[0]].text
        await pilot.press("1", "enter")
        await on_screen(pilot, FeedbackScreen)
        lines = app.screen.query_one("#feedback").source.splitlines()
        [picked] = [line for line in lines if "(your pick)" in line]
        assert first in picked and "**1." in picked  # numbered 1, where it was shown


async def test_rubric_criteria_render_their_markdown(make_app, tmp_path):
    bank = edited_alpha_bank(tmp_path, {"mentions softmax saturation": "mentions `softmax` **saturation**"})
    app = make_app(banks=[bank], question="alpha-free")
    async with app.run_test(size=SIZE) as pilot:
        await on_screen(pilot, QuestionScreen)
        await pilot.pause()
        await pilot.press(*"it saturates", "ctrl+s")
        await on_screen(pilot, RubricScreen)
        await pilot.pause()
        row, bold = bold_words(app, "2. mentions")
        assert "**" not in row and "`" not in row and "mentions softmax saturation" in row
        assert "saturation" in bold


def test_a_skipped_question_shows_the_worked_answer_or_the_model_answer(tmp_path):
    questions = load_banks([DATA / "alpha.yaml"]).questions
    with Store.open(tmp_path / "progress.sqlite3") as store:
        session = practice(store, questions, now=lambda: NOW, rng=random.Random(7))
        shown = {}
        while (showing := session.next()) is not None:
            shown[showing.question.kind] = feedback_markdown(session.skip(showing))
    numeric = shown["numeric"]
    assert "You skipped this question" in numeric and "### Worked computation" in numeric
    assert "per_token × seq = 131,072 ×" in numeric
    free = shown["free"]
    assert "### Model answer\n\nIf q and k have i.i.d. unit-variance components" in free
    assert "- ☐ derives Var(q·k) = d_k" in free


def test_a_numeric_question_shown_and_not_answered_is_named_with_its_numbers(tmp_path):
    from quizprep.bank.formula import format_number
    from quizprep.tui.screens.report import report_markdown

    questions = load_banks([DATA / "alpha.yaml"]).questions
    with Store.open(tmp_path / "progress.sqlite3") as store:
        run = practice(store, [q for q in questions if q.id == "alpha-numeric"], now=lambda: NOW,
                       rng=random.Random(3))
        showing = run.next()
        text = report_markdown(run.end(), questions={q.id: q for q in questions})
    not_answered = text.split("### Not answered", 1)[1]
    assert f"KV cache in bf16 for {format_number(showing.draw.values['layers'])} layers" in not_answered
    assert "`layers`" not in not_answered
    assert "No answers in this session." in text and "Every answer above is saved" not in text
