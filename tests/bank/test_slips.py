"""Diagnoses only where the cause is likely (issue 21, item 4): ×½ is multiply-adds only when the
answer's formula shows the ×2 of a multiply-add and no term of the sum explains it better."""
from __future__ import annotations

from pathlib import Path

import pytest

from quizprep.bank import NumericQuestion, load_banks
from quizprep.bank.formula import additive_terms, has_even_factor, parse_formula
from quizprep.bank.numeric import NumericVerdict, draw, judge
from quizprep.bank.slips import ratio_text

READINGS = Path(__file__).parent / "data" / "readings.yaml"
SHIPPED = Path(__file__).parents[2] / "questions"
MACS = "multiply-adds (MACs)"


def question(question_id: str, path: Path = READINGS) -> NumericQuestion:
    found = next(q for q in load_banks([path]).questions if q.id == question_id)
    assert isinstance(found, NumericQuestion)
    return found


def answered_times(quiz: NumericQuestion, ratio: float, seed: int = 1) -> NumericVerdict:
    shown = draw(quiz, seed)
    return judge(quiz, shown, f"{float(shown.answer) * ratio!r} {quiz.unit}".strip())


def test_cross_attention_without_pv_is_told_a_term_is_missing_not_macs():
    verdict = answered_times(question("readings-cross-attention"), 0.5)
    assert not verdict.correct and MACS not in (verdict.diagnosis or "")
    assert verdict.diagnosis == ("Off by ×½: that leaves out one of score_flops and pv_flops (each "
                                 "2 × n × m × d = 24.58 MFLOP); the answer is score_flops + pv_flops.")


@pytest.mark.parametrize("seed", range(5))
def test_the_shipped_cross_attention_question_is_not_told_macs(seed):
    quiz = question("complexity-attention-forward-flops", SHIPPED / "complexity.yaml")
    diagnosis = answered_times(quiz, 0.5, seed).diagnosis or ""
    assert diagnosis.startswith("Off by ×½: that leaves out one of score_flops and pv_flops")


def test_half_of_a_score_product_is_macs():
    verdict = answered_times(question("readings-score-flops"), 0.5)
    assert verdict.diagnosis == "Off by ×½: that counts multiply-adds (MACs); one multiply-add is 2 FLOPs."


def test_half_of_a_flop_count_without_a_visible_multiply_add_is_not_macs():
    diagnosis = answered_times(question("readings-opaque-flops"), 0.5).diagnosis or ""
    assert MACS not in diagnosis and diagnosis.startswith("Off by ×½: half the answer")


def test_an_unequal_term_left_out_is_named_with_its_value():
    quiz = question("readings-layer-params")
    shown = draw(quiz, 1)
    verdict = judge(quiz, shown, str(4 * 512**2))
    assert verdict.diagnosis == ("Off by ×0.998: that leaves out 4 × d = 2.048K params; "
                                 "the answer is 4 × d ^ 2 + 4 × d.")


def test_a_question_of_one_term_has_no_left_out_term():
    verdict = answered_times(question("readings-score-flops"), 0.75)
    assert verdict.diagnosis is None


@pytest.mark.parametrize("formula, even", [
    ("2 * macs", True), ("4 * b * h * pairs * d", True), ("6 * n * t", True),
    ("score + pv", True), ("h * c * (score + out)", True), ("flops * tokens", False),
    ("3 * n", False), ("2 * n / 2", False), ("2 * a + b", False), ("0 * n", False),
])
def test_the_multiply_add_factor_is_seen_through_definitions(formula, even):
    definitions = {name: parse_formula(source) for name, source in
                   {"macs": "b * n * d", "score": "2 * n * d", "pv": "2 * n * d", "out": "2 * k", "b": "1"}.items()}
    assert has_even_factor(parse_formula(formula), definitions) is even


def test_terms_follow_definitions_that_are_sums():
    definitions = {"qk": parse_formula("2 * n * d"), "both": parse_formula("qk + pv")}
    terms = additive_terms(parse_formula("both + 4 * n"), definitions)
    assert [term.render() for term in terms] == ["qk", "pv", "4 × n"]
    assert additive_terms(parse_formula("qk"), definitions)[0].render() == "qk"


@pytest.mark.parametrize("ratio, text", [(0.5, "×½"), (0.125, "×⅛"), (2.0, "×2"), (1000 / 1024, "×0.977"),
                                         (1.024, "×1.02")])
def test_ratios_read_as_fractions_where_they_are_simple(ratio, text):
    assert ratio_text(ratio) == text


def test_a_mib_answer_is_not_told_it_mixed_up_gib_and_gb():
    """Issue 32, item 4: 7.5 MiB for 8 MiB was "GiB read as GB" on a question that names no GiB."""
    quiz = question("readings-mib")
    diagnosis = judge(quiz, draw(quiz, 1), "7.5 MiB").diagnosis or ""
    assert "GiB" not in diagnosis and "GB" not in diagnosis


def test_the_mix_up_of_the_units_in_play_is_still_named():
    quiz = question("readings-mib")
    assert judge(quiz, draw(quiz, 1), "8 MB").diagnosis == "Off by ×0.954: MiB and MB mixed up (1 MiB = 2²⁰ B)."
    assert judge(quiz, draw(quiz, 1), "0.0078 GB").diagnosis == \
        "Off by ×0.931: that is GiB read as GB (1 GiB = 2³⁰ B ≈ 1.074 GB)."


def test_a_plain_byte_count_is_checked_against_the_prefix_of_its_size():
    quiz = question("readings-kib")  # 131,072 B
    assert judge(quiz, draw(quiz, 1), "128000").diagnosis == \
        "Off by ×0.977: KiB and kB mixed up (1 KiB = 1024 B, 1 kB = 1000 B)."
