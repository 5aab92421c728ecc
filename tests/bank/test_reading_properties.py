"""Properties of the answer parser over generated text: it never fails but with its own error,
agrees with exact arithmetic, and keeps units and scales consistent with one another."""
from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quizprep.bank import NumericQuestion, load_banks
from quizprep.bank.numeric import draw, judge
from quizprep.bank.units import Reading, UnitError, parse_quantity

READINGS = [q for q in load_banks([Path(__file__).parent / "data" / "readings.yaml"]).questions
            if isinstance(q, NumericQuestion)]

DISPLAY_UNITS = [("B", None), ("B", "MiB"), ("B", "GiB"), ("B", "KiB"), ("B", "GB"), ("FLOP", None),
                 ("FLOP", "TFLOP"), ("params", None), ("s", None), ("s", "ms"), ("", None)]
# The characters answers are made of, so that generated text often comes close to a number.
ALPHABET = "0123456789.,_eE+-−*/^x×%() kKMGTPiBbsFLOPparmtokenµ"
BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
DECIMAL = {"k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
PREFIXES = st.sampled_from(sorted({**BINARY, **DECIMAL}.items()))
decimals = st.decimals(min_value=0, max_value=10**6, places=3, allow_nan=False, allow_infinity=False)


def exactly(number: Decimal) -> str:
    return f"{number:f}"


@given(st.one_of(st.text(ALPHABET, max_size=24), st.text(max_size=24)), st.sampled_from(DISPLAY_UNITS))
def test_any_text_is_a_quantity_or_the_parsers_own_error(text, units):
    unit, display_unit = units
    try:
        quantity = parse_quantity(text, unit, display_unit)
    except UnitError as error:
        assert str(error)
        return
    assert math.isfinite(quantity.value) and quantity.understood
    assert quantity.value >= 0 or unit == ""


@given(st.one_of(st.text(ALPHABET, max_size=24), st.text(max_size=24)), st.sampled_from(READINGS),
       st.integers(0, 3))
def test_any_text_gets_a_verdict_and_a_wrong_one_a_reason_or_none(text, question, seed):
    verdict = judge(question, draw(question, seed), text)
    assert verdict.expected
    if verdict.error:
        assert verdict.value is None and not verdict.correct
    else:
        assert verdict.value is not None and math.isfinite(verdict.value)
        assert verdict.diagnosis is None or (not verdict.correct and verdict.diagnosis)


@given(st.integers(0, 10**6), PREFIXES)
def test_a_prefix_is_its_scale_however_it_is_written(n, prefix):
    letters, scale = prefix
    expected = n * scale
    assert parse_quantity(f"{n} {letters}B", "B").value == expected
    assert parse_quantity(f"{n}*{scale} B", "B").value == expected
    assert parse_quantity(f"{n} × {scale}", "B").value == expected
    assert parse_quantity(f"{n} {letters}b", "B").value * 8 == expected  # bits: an eighth of a byte each


@given(st.integers(0, 10**6), st.sampled_from(["KiB", "MiB", "GiB", "GB", "KB"]))
def test_a_bare_number_is_the_display_unit_written_out(n, display_unit):
    implied = parse_quantity(str(n), "B", display_unit)
    assert implied.reading is Reading.IMPLIED_UNIT
    assert implied.value == parse_quantity(f"{n} {display_unit}", "B").value


@given(st.integers(-10**6, 10**6), st.integers(-10**6, 10**6), st.sampled_from(["*", "×", " x ", "+", "-", "/"]))
def test_arithmetic_agrees_with_exact_arithmetic(a, b, operator):
    exact = {"*": a * b, "×": a * b, " x ": a * b, "+": a + b, "-": a - b}.get(operator)
    text = f"{a}{operator}{b}" if b >= 0 else f"{a}{operator}({b})"
    if operator == "/":
        if b == 0:
            with pytest.raises(UnitError, match="not a finite number"):
                parse_quantity(text, "")
            return
        exact = Fraction(a, b)
    assert parse_quantity(text, "").value == float(exact)


@given(st.integers(-20, 20), st.integers(0, 30))
def test_powers_agree_with_exact_powers(base, exponent):
    assert parse_quantity(f"{base}^{exponent}" if base >= 0 else f"({base})^{exponent}", "").value \
        == float(base**exponent)


@given(decimals)
def test_typed_decimals_are_rounded_once(number):
    written = exactly(number)
    assert parse_quantity(f"{written}%", "").value == float(Fraction(written) / 100)
    assert parse_quantity(f"{written} ms", "s").value == float(Fraction(written) / 1000)
    assert parse_quantity(f"{written} KiB", "B").value == float(Fraction(written) * 1024)


@given(decimals.filter(lambda d: d > 0), st.sampled_from(DISPLAY_UNITS).filter(lambda pair: pair[0] != ""))
def test_no_size_is_negative(number, units):
    unit, display_unit = units
    with pytest.raises(UnitError, match="is negative"):
        parse_quantity(f"-{exactly(number)}", unit, display_unit)


@given(st.integers(1, 9000), st.sampled_from(sorted(DECIMAL)))  # up to 9000 T: below 10¹⁶, shown to the digit
def test_the_decimal_shorthand_says_what_1024_would_be(n, letter):
    quantity = parse_quantity(f"{n}{letter}", "B")
    power = {"k": 1, "K": 1, "M": 2, "G": 3, "T": 4}[letter]
    assert quantity.value == n * 1000**power and quantity.reading is Reading.DECIMAL_SHORTHAND
    assert quantity.understood.endswith(f"would be {n * 1024**power:,} B")


@given(st.integers(0, 2**26), st.integers(0, 2**26), st.sampled_from(["B", "FLOP", "params", ""]))
def test_what_was_understood_reads_back_as_the_same_value(a, b, unit):
    quantity = parse_quantity(f"{a} * {b} {unit}".strip(), unit)
    exact = quantity.understood.split("(")[-1].rstrip(")")
    assert parse_quantity(exact, unit).value == quantity.value == a * b
