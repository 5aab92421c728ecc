"""Numbers read the way the question asks (issue 21, item 3): bare numbers in the question's unit,
arithmetic, factors, percentages, negative sizes, bits, and k as 1000."""
from __future__ import annotations

from pathlib import Path

import pytest

from quizprep.bank import NumericQuestion, load_banks
from quizprep.bank.numeric import NumericVerdict, draw, judge
from quizprep.bank.units import Reading, UnitError, parse_quantity

READINGS = Path(__file__).parent / "data" / "readings.yaml"


def answered(question_id: str, text: str) -> NumericVerdict:
    question = next(q for q in load_banks([READINGS]).questions if q.id == question_id)
    assert isinstance(question, NumericQuestion)
    return judge(question, draw(question, 1), text)


@pytest.mark.parametrize("text, unit, display_unit, value", [
    ("8", "B", "MiB", 8 * 2**20),
    ("8.5", "B", "GiB", 8.5 * 2**30),
    ("12", "s", "ms", 0.012),
    ("3", "FLOP", "TFLOP", 3e12),
    ("8", "B", None, 8),
    ("8 B", "B", "MiB", 8),
    ("2 GiB", "B", "MiB", 2 * 2**30),
])
def test_a_bare_number_takes_the_questions_unit(text, unit, display_unit, value):
    assert parse_quantity(text, unit, display_unit).value == value


def test_eight_typed_for_an_answer_in_mib_is_right():
    verdict = answered("readings-mib", "8")
    assert verdict.correct and verdict.understood == "8 MiB (8,388,608 B)"


@pytest.mark.parametrize("text, understood", [
    ("32 GB", "32 GB (32,000,000,000 B)"),
    ("32", "32 GB (32,000,000,000 B)"),
    ("32 GiB", "34.36 GB (34,359,738,368 B)"),
    ("512 MB", "0.512 GB (512,000,000 B)"),
])
def test_what_was_understood_is_in_the_questions_display_unit(text, understood):
    # A question asked in GB shows the answer in GB, whatever unit was typed ("32 GB" read as
    # "29.8 GiB" looked like a different number from the expected "32 GB").
    assert parse_quantity(text, "B", "GB").understood == understood


@pytest.mark.parametrize("text, unit, value", [
    ("4*8", "", 32),
    ("2*2048*2048", "B", 2 * 2048 * 2048),
    ("2*2048*2048 B", "B", 2 * 2048 * 2048),
    ("2 × 2048 × 2048 B", "B", 2 * 2048 * 2048),
    ("2^25", "", 2**25),
    ("8*2^20", "B", 8 * 2**20),
    ("8 * 2**20 B", "B", 8 * 2**20),
    ("3e9/2", "FLOP", 1.5e9),
    ("4 * 8 MiB", "B", 32 * 2**20),
    ("(1024 + 1024) * 2", "", 4096),
    ("1,024 * 2 KiB", "B", 2048 * 1024),
    ("2^-1", "", 0.5),
    ("08", "", 8),
])
def test_products_quotients_and_powers_with_or_without_units(text, unit, value):
    assert parse_quantity(text, unit).value == value


@pytest.mark.parametrize("text", ["4x", "4×", "×4", "x 4", "4 x", "4X".lower()])
def test_a_factor_may_be_written_4x(text):
    quantity = parse_quantity(text, "")
    assert quantity.value == 4 and quantity.reading is Reading.FACTOR and quantity.understood == "4×"


def test_a_factor_is_refused_where_a_size_is_asked():
    with pytest.raises(UnitError, match="'x' marks a factor; this question asks for bytes"):
        parse_quantity("4x", "B")


@pytest.mark.parametrize("text, value", [("14.8%", 0.148), ("50 %", 0.5), ("0.5%", 0.005), ("100%", 1.0)])
def test_a_fraction_may_be_a_percentage(text, value):
    assert parse_quantity(text, "").value == value


def test_a_percentage_answers_a_fraction_question():
    verdict = answered("readings-fraction", "14.8%")
    assert verdict.correct and verdict.understood == "0.148 (14.8%)"


def test_a_percentage_is_refused_for_a_size():
    with pytest.raises(UnitError, match="% is for fractions; this question asks for bytes"):
        parse_quantity("14.8%", "B")


@pytest.mark.parametrize("text, unit, display_unit", [
    ("-8 MiB", "B", None), ("-8", "B", "MiB"), ("-1e9", "FLOP", None), ("-3B", "params", None),
    ("-2 ms", "s", None), ("-2^10 B", "B", None), ("−8 MiB", "B", None),
])
def test_negative_sizes_are_refused_with_a_reason(text, unit, display_unit):
    with pytest.raises(UnitError, match="is negative; a number of"):
        parse_quantity(text, unit, display_unit)


def test_a_plain_number_may_be_negative():
    assert parse_quantity("-0.5", "").value == -0.5


@pytest.mark.parametrize("text, value, name", [
    ("8 Mib", 2**20, "mebibits"),
    ("8 Gb", 1e9, "gigabits"),
    ("8 kb", 1e3, "kilobits"),
    ("8 Kib", 2**10, "kibibits"),
    ("16 bits", 2, "bits"),
    ("8 Mbit", 1e6, "megabits"),
    ("8 MBIT", 1e6, "megabits"),
])
def test_bits_are_read_as_bits(text, value, name):
    quantity = parse_quantity(text, "B")
    assert quantity.value == value and quantity.reading is Reading.BITS
    assert f"means {name}, 8 to a byte" in quantity.understood


@pytest.mark.parametrize("text, value", [("8 mib", 8 * 2**20), ("8 gb", 8e9), ("8 MiB", 8 * 2**20),
                                         ("8 kB", 8e3), ("8 KB", 8e3), ("8 kib", 8 * 2**10)])
def test_bytes_typed_fast_stay_bytes(text, value):
    quantity = parse_quantity(text, "B")
    assert quantity.value == value and quantity.reading is Reading.AS_WRITTEN


def test_bits_where_bytes_are_asked_are_diagnosed():
    verdict = answered("readings-mib", "8 Mib")
    assert not verdict.correct
    assert verdict.diagnosis == ("Off by ×⅛: you wrote mebibits, and the question asks bytes; a byte is "
                                 "8 bits, so write B for bytes (b is bits).")


def test_the_same_amount_in_bits_is_right():
    assert answered("readings-mib", "64 Mib").correct


def test_bits_are_refused_where_flops_are_asked():
    with pytest.raises(UnitError, match="'Mib' is a unit of bits"):
        parse_quantity("8 Mib", "FLOP")


@pytest.mark.parametrize("text", ["128k", "128K"])
def test_k_is_1000_and_says_what_1024_would_be(text):
    quantity = parse_quantity(text, "B")
    assert quantity.value == 128_000 and quantity.reading is Reading.DECIMAL_SHORTHAND
    assert quantity.understood.endswith(f"{text[-1]} means 1000; 128 KiB would be 131,072 B")


@pytest.mark.parametrize("text", ["128k", "128K"])
def test_k_for_kib_gets_the_1000_vs_1024_hint(text):
    verdict = answered("readings-kib", text)
    assert not verdict.correct
    assert verdict.diagnosis == ("Off by ×0.977: k means 1000, not 1024; 131,072 B is written 128 KiB "
                                 "or 128*2^10 B.")


def test_k_for_a_power_of_two_count_gets_the_hint():
    verdict = answered("readings-tokens", "128k")
    assert verdict.diagnosis == "Off by ×0.977: k means 1000, not 1024; 131,072 is written 128*2^10."
    assert answered("readings-tokens", "128*2^10").correct and answered("readings-tokens", "2^17").correct


def test_bytes_typed_bare_for_an_answer_in_mib_are_named():
    verdict = answered("readings-mib", "8388608")
    assert not verdict.correct
    assert verdict.diagnosis == ('A bare number is read in MiB, as the question asks: 8,388,608 is 8,388,608 '
                                 'MiB. To answer in B, write the unit: "8,388,608 B".')
    assert answered("readings-mib", "8,388,608 B").correct


@pytest.mark.parametrize("text, fragment", [
    ("__import__('os').system('true')", "not a number"),
    ("sqrt(4)", "not a number"),
    ("1 if 1 else 2", "not a number"),
    ("2 < 3", "not a number"),
    ("(", "not a number"),
    ("1,5", "write decimals with a point"),
    ("9**9**9**9", "not a finite number"),
    ("1/0", "not a finite number"),
    ("8 MiB * 4", "write the unit once, at the end"),
])
def test_arithmetic_is_numbers_and_operators_only(text, fragment):
    with pytest.raises(UnitError, match=fragment):
        parse_quantity(text, "B")


def test_a_display_unit_that_is_the_base_unit_reads_bare_numbers_as_written():
    assert parse_quantity("3e12", "FLOP", "FLOP").reading is Reading.AS_WRITTEN
    assert parse_quantity("3e12", "FLOP", "FLOP").understood == "3 TFLOP (3,000,000,000,000 FLOP)"
