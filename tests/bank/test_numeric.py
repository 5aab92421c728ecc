"""Numeric questions at run time: reproducible draws, worked steps, judging, slip diagnosis."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from quizprep.bank import NumericQuestion, load_banks
from quizprep.bank.formula import parse_formula
from quizprep.bank.numeric import draw, fill_placeholders, fill_template, judge, worked_steps

SAMPLE = Path(__file__).parent / "data" / "valid.yaml"


def sample_question() -> NumericQuestion:
    question = next(q for q in load_banks([SAMPLE]).questions if isinstance(q, NumericQuestion))
    return question


def test_same_seed_same_draw_and_seeds_vary_the_numbers() -> None:
    question = sample_question()
    assert draw(question, 5).values == draw(question, 5).values
    assert len({draw(question, seed).answer for seed in range(40)}) > 3


def test_answer_is_computed_from_the_formula() -> None:
    question = sample_question()
    shown = draw(question, 11)
    v = shown.values
    assert shown.answer == 2 * v["layers"] * v["kv_heads"] * v["head_dim"] * v["bytes"] * v["seq"] * v["batch"]


def test_a_template_not_drawn_shows_the_values_its_draws_take() -> None:
    # history and reports name questions never asked: "{{seq}}" is prose, not a template's code,
    # and its name alone read "seq tokens" (issue 32, item 9)
    text = "{{layers}} layers, {{per_token}} bytes per token, {{ seq }} tokens, batch {{batch}}, {{answer}} in all"
    assert fill_template(text, sample_question()) == ("32 layers, 131,072 bytes per token, 2,048, 4,096 or 8,192 "
                                                      "tokens, batch 1 to 4, *answer* in all")


def test_a_value_derived_from_drawn_ones_takes_every_value_its_draws_give() -> None:
    question = sample_question()
    every = {draw(question, seed).values["seq"] * draw(question, seed).values["batch"] for seed in range(400)}
    tokens = replace(question, derived=(*question.derived, ("tokens", parse_formula("seq * batch"))))
    text = fill_template("{{tokens}}", tokens)
    assert text == f"{min(every):,} to {max(every):,}"


def test_worked_steps_show_this_draws_numbers() -> None:
    question = sample_question()
    shown = draw(question, 3)
    steps = worked_steps(question, shown)
    assert steps[0] == "per_token = 2 × layers × kv_heads × head_dim × bytes = 2 × 32 × 8 × 128 × 2 = 131,072"
    assert f"{shown.values['seq']:,}" in steps[1] and steps[1].endswith("B)")


def test_placeholders_are_filled() -> None:
    question = sample_question()
    shown = draw(question, 3)
    assert f"{shown.values['seq']:,} tokens" in fill_placeholders(question.prompt, shown)


def test_right_answer_in_any_unit_is_accepted() -> None:
    question = sample_question()
    shown = draw(question, 1)
    for text in (f"{shown.answer} B", f"{shown.answer / 2**30} GiB", f"{shown.answer / 1e9:.4f} GB"):
        assert judge(question, shown, text).correct, text


def test_question_specific_slip_is_named() -> None:
    question = sample_question()
    shown = draw(question, 1)
    verdict = judge(question, shown, f"{shown.answer / 2} B")
    assert not verdict.correct and verdict.diagnosis == "Only K or only V was counted."


def test_gib_read_as_gb_is_named() -> None:
    question = sample_question()
    shown = draw(question, 1)
    gib = shown.answer / 2**30
    verdict = judge(question, shown, f"{gib} GB")
    assert not verdict.correct and "GiB read as GB" in (verdict.diagnosis or "")


def test_unparseable_answer_is_wrong_with_a_reason() -> None:
    question = sample_question()
    verdict = judge(question, draw(question, 1), "lots")
    assert not verdict.correct and verdict.value is None and "not a number" in (verdict.error or "")


def test_unrelated_wrong_number_has_no_diagnosis() -> None:
    question = sample_question()
    verdict = judge(question, draw(question, 1), "17 B")
    assert not verdict.correct and verdict.diagnosis is None
