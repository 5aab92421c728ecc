"""Choices on the question screen (issue 13, 6.6, 6.7, 7): Markdown rendered, not shown raw; a
long choice wraps under its own text; ↑/↓ and Space pick as number keys do."""
from __future__ import annotations

from pathlib import Path

import pytest

from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.widgets.inline_markdown import inline_markdown

LONG = ("A padding mask does **not** depend on the query position: `masked_fill` writes `-inf` "
        "where the key is padding, so every query of the row ignores those keys in every layer")
BANK = f"""\
topic: gamma
title: Gamma
questions:
  - id: gamma-markdown
    kind: choice
    difficulty: 1
    tags: [masks]
    shuffle: false
    prompt: Which statement about padding masks is right?
    explanation: The mask is per key.
    references: ["PyTorch docs, scaled_dot_product_attention"]
    choices:
      - text: "{LONG}"
        correct: true
        why: It hides padded keys from every query.
      - text: "A fully masked row gives `nan 3.0` only with *fp16*"
        why: A fully masked row gives nan in any precision.
      - text: Padding masks are added after the softmax
        why: After the softmax the weights already sum to 1 over the padding.
  - id: gamma-multi
    kind: choice
    difficulty: 2
    tags: [masks]
    shuffle: false
    prompt: Which hide future keys? (all that apply)
    explanation: Both do.
    references: ["PyTorch docs"]
    choices:
      - text: Add -inf above the diagonal
        correct: true
        why: exp(-inf) = 0.
      - text: Zero the scores above the diagonal
        why: exp(0) = 1.
      - text: masked_fill(future, -inf)
        correct: true
        why: The same mask in place.
"""


@pytest.fixture
def gamma(tmp_path: Path) -> Path:
    bank = tmp_path / "gamma.yaml"
    bank.write_text(BANK, encoding="utf-8")
    return bank


def screen_lines(app) -> list[str]:
    return ["".join(segment.text for segment in strip) for strip in app.screen._compositor.render_strips()]


def choice_lines(app) -> list[str]:
    """The lines of the choices, from the first choice to the hint's end of the picker."""
    lines = screen_lines(app)
    first = next(i for i, line in enumerate(lines) if " 1. " in line)
    return lines[first:first + 8]


async def test_markdown_in_choices_is_rendered_not_shown_raw(make_app, gamma):
    app = make_app(banks=[gamma], mode="practice")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        text = "\n".join(choice_lines(app))
        assert "**" not in text and "`" not in text and "*fp16*" not in text
        assert "does not depend" in text and "gives nan 3.0 only with fp16" in text
        second = app.screen.query(".choice-text")[1]
        spans = {second.visual.plain[s.start:s.end]: s.style for s in second.visual.spans}
        assert spans["nan 3.0"] == ".choice-picker--code" and spans["fp16"] == "italic"
        first = app.screen.query(".choice-text")[0]
        assert any(first.visual.plain[s.start:s.end] == "not" and s.style == "bold"
                   for s in first.visual.spans)


async def test_a_long_choice_wraps_under_its_own_text(make_app, gamma):
    app = make_app(banks=[gamma], mode="practice")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        first, second = choice_lines(app)[:2]
        indent = first.index("A padding")
        assert second[:indent].strip() in ("", "▎", "▊"), (first, second)  # only the focus border
        assert second[indent] != " " and second[indent - 1] == " ", (first, second)


async def test_arrow_keys_and_space_pick_a_choice(make_app, gamma, stored):
    app = make_app(banks=[gamma], mode="practice")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down", "down", "space", "up", "enter")
        assert isinstance(app.screen, FeedbackScreen)
    with stored() as store:
        [answer] = store.answers(question_id="gamma-markdown")
    assert (answer.response, answer.correct) == ("3", False)


async def test_space_toggles_each_choice_where_several_are_right(make_app, gamma, stored):
    app = make_app(banks=[gamma], mode="practice")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("1", "enter", "enter")
        assert isinstance(app.screen, QuestionScreen) and app.screen.showing.question.id == "gamma-multi"
        # ↑ from the first choice wraps round to the last
        await pilot.press("space", "up", "space", "down", "down", "space", "space", "enter")
        assert isinstance(app.screen, FeedbackScreen)
    with stored() as store:
        [answer] = store.answers(question_id="gamma-multi")
    assert (answer.response, answer.correct) == ("1,3", True)


SHUFFLED = BANK.replace("    shuffle: false\n", "")


async def test_choices_show_in_the_showings_order_and_keys_pick_what_is_shown(make_app, tmp_path, stored):
    bank = tmp_path / "gamma.yaml"
    bank.write_text(SHUFFLED, encoding="utf-8")
    app = make_app(banks=[bank], mode="practice")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        showing = app.screen.showing
        order = showing.choice_order
        assert sorted(order) == [0, 1, 2] and order != (0, 1, 2)  # seed 7 shuffles this one
        shown = [str(text.visual) for text in app.screen.query(".choice-text")]
        bank_texts = [str(inline_markdown(c.text, "")) for c in showing.question.choices]
        assert shown == [bank_texts[i] for i in order]
        await pilot.press("1", "enter")
        assert isinstance(app.screen, FeedbackScreen)
    with stored() as store:
        [answer] = store.answers(question_id="gamma-markdown")
    assert answer.response == str(order[0] + 1) and answer.correct == (order[0] == 0)
