"""History shows prompts as the learner saw them (issue 21, item 7): the drawn numbers, not
`{{layers}}`; Markdown rendered, not `**`; a sentence wrapped over lines whole, not cut at the
first line; and a wrong number beside the right one for its numbers."""
from __future__ import annotations

import random
from datetime import timedelta, timezone
from pathlib import Path

from textual.widgets import Static

from free_answers import on_screen
from quizprep.bank.loader import load_banks
from quizprep.study import builders
from quizprep.study.history import prompt_summary
from quizprep.study.store import Store
from quizprep.tui.screens.history import HistoryScreen
from quizprep.tui.screens.home import HomeScreen

# this folder's banks (`conftest.DATA` is another folder's when tests of two folders run together)
DATA = Path(__file__).parent / "data"

WRAPPED = """\
topic: gamma
title: Gamma
questions:
  - id: gamma-mask
    kind: choice
    difficulty: 1
    tags: []
    references: ["PyTorch docs"]
    prompt: |
      In `scaled_dot_product_attention`, a boolean mask's **True means
      the position takes part** in attention. What does False mean?

      ```python
      F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
      ```
    explanation: False positions are masked out.
    choices:
      - text: It is masked out
        correct: true
        why: True means attend.
      - text: It is kept
        why: That is what True means.
"""


async def test_a_numeric_history_shows_the_drawn_numbers_and_the_right_answer(make_app, db, clock):
    questions = load_banks([DATA / "alpha.yaml"]).questions
    with Store.open(db) as store:
        run = builders.practice(store, questions, now=clock, rng=random.Random(3))
        run.queue = ["alpha-numeric"]
        showing = run.next()
        run.answer_numeric(showing, "1 GiB")
        run.end()
    seq = showing.draw.values["seq"]
    app = make_app(banks=[DATA / "alpha.yaml"])
    async with app.run_test(size=(100, 30)) as pilot:
        await on_screen(pilot, HomeScreen)
        app.push_screen(HistoryScreen(app.store, [q for q in questions if q.id == "alpha-numeric"], clock(), "x"))
        await on_screen(pilot, HistoryScreen)
        await pilot.pause()
        text = " ".join(str(s.content) for s in app.screen.query(".history-title, .history-line"))
        assert "{{" not in text and f"32 layers, 8 KV heads of dim 128, {seq:,} tokens" in text.replace("\n", " ")
        assert "answered: 1 GiB (right: " in text


def test_a_prompt_summary_is_its_whole_first_paragraph_with_placeholders_named(tmp_path: Path):
    (tmp_path / "gamma.yaml").write_text(WRAPPED, encoding="utf-8")
    gamma = load_banks([tmp_path]).questions[0]
    assert prompt_summary(gamma) == ("In `scaled_dot_product_attention`, a boolean mask's **True means the "
                                     "position takes part** in attention. What does False mean?")
    numeric = next(q for q in load_banks([DATA / "alpha.yaml"]).questions if q.id == "alpha-numeric")
    # never drawn: the values that never change, and those the one drawn anew (seq) takes
    assert prompt_summary(numeric) == NEVER_DRAWN


# Issue 32, item 9: a drawn value's bare name read "seq tokens", "with heads heads", "Δ = delta".
NEVER_DRAWN = "KV cache in bf16 for 32 layers, 8 KV heads of dim 128, 4,096 or 8,192 tokens?"


async def test_history_of_a_topic_names_an_unanswered_numbers_question_sensibly(make_app):
    app = make_app(banks=[DATA / "alpha.yaml"])
    async with app.run_test(size=(100, 30)) as pilot:
        await on_screen(pilot, HomeScreen)
        await pilot.press("h")
        await on_screen(pilot, HistoryScreen)
        await pilot.pause()
        [title] = [s.content for s in app.screen.query(".history-title") if "alpha-numeric" in str(s.content)]
        assert " ".join(str(title).split()) == f"alpha-numeric · {NEVER_DRAWN}"


async def test_a_reports_unasked_numbers_question_reads_as_prose(make_app):
    from quizprep.tui.screens.question import QuestionScreen
    from quizprep.tui.screens.report import ReportScreen

    app = make_app(banks=[DATA / "alpha.yaml"], mode="practice")
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, QuestionScreen)
        assert app.screen.showing.question.id != "alpha-numeric"
        await pilot.press("escape")
        await on_screen(pilot, ReportScreen)
        report = app.screen.query_one("#report").source
    not_answered = report.split("### Not answered", 1)[1]
    assert f"- {NEVER_DRAWN} *(alpha-numeric)*" in not_answered
    assert "`seq`" not in not_answered


async def test_history_renders_the_markdown_of_a_wrapped_prompt(make_app, tmp_path: Path):
    (tmp_path / "gamma.yaml").write_text(WRAPPED, encoding="utf-8")
    app = make_app(banks=[tmp_path])
    async with app.run_test(size=(80, 24)) as pilot:
        await on_screen(pilot, HomeScreen)
        await pilot.press("h")
        await on_screen(pilot, HistoryScreen)
        title = str(app.screen.query_one(".history-title", Static).content)
        assert "**" not in title and "`" not in title
        assert "True means the position takes part in attention. What does False mean?" in " ".join(title.split())


async def test_history_times_are_in_the_learners_zone(make_app, db, clock):
    questions = load_banks([DATA / "alpha.yaml"]).questions
    with Store.open(db) as store:
        run = builders.practice(store, questions, now=clock, rng=random.Random(3))
        run.queue = ["alpha-numeric"]
        run.answer_numeric(run.next(), "1 GiB")
        run.end()
    answered = clock()
    india = timezone(timedelta(hours=5, minutes=30), "IST")
    app = make_app(banks=[DATA / "alpha.yaml"], tz=india)
    async with app.run_test(size=(100, 30)) as pilot:
        await on_screen(pilot, HomeScreen)
        await pilot.press("h")
        await on_screen(pilot, HistoryScreen)
        heading = str(app.screen.query_one("#history-heading", Static).content)
        lines = " ".join(str(s.content) for s in app.screen.query(".history-line"))
        assert heading.endswith("times in IST (UTC+05:30)"), heading
        assert f"{answered.astimezone(india):%Y-%m-%d %H:%M}  practice" in lines, lines
