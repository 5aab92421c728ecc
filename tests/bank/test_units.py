"""Unit parsing: what learners type, and round trips through what the app shows."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quizprep.bank.units import UnitError, format_quantity, parse_quantity


@pytest.mark.parametrize("text, unit, value", [
    ("32 GiB", "B", 32 * 2**30),
    ("32GiB", "B", 32 * 2**30),
    ("3.4e10 B", "B", 3.4e10),
    ("512 MB", "B", 512e6),
    ("1,073,741,824", "B", 2**30),
    ("268M", "", 268e6),
    ("268M", "params", 268e6),
    ("7B", "params", 7e9),
    ("7B params", "params", 7e9),
    ("7 B", "B", 7),
    ("1.5 TFLOP", "FLOP", 1.5e12),
    ("2.7e8", "FLOP", 2.7e8),
    ("3.2 x 10^9", "FLOP", 3.2e9),
    ("1.2 ms", "s", 1.2e-3),
    ("-0.5", "", -0.5),
    (".25", "", 0.25),
])
def test_parses_what_learners_type(text: str, unit: str, value: float) -> None:
    assert parse_quantity(text, unit).value == pytest.approx(value)


@pytest.mark.parametrize("text, unit, fragment", [
    ("12 GB", "FLOP", "unit of bytes"),
    ("abc", "B", "not a number"),
    ("", "B", "not a number"),
    ("5 parsecs", "B", "unknown unit"),
    ("1e999", "", "not a finite number"),
])
def test_rejects_with_a_reason(text: str, unit: str, fragment: str) -> None:
    with pytest.raises(UnitError, match=fragment):
        parse_quantity(text, unit)


@pytest.mark.parametrize("text, unit, value", [
    ("32 mib", "B", 32 * 2**20),
    ("32 MIB", "B", 32 * 2**20),
    ("512 mb", "B", 512e6),
    ("1.5 tflop", "FLOP", 1.5e12),
    ("7b", "params", 7e9),
    ("268m", "", 268e6),
    ("12 MS", "s", 12e-3),
    ("430 tokens", "", 430),
    ("1 token", "", 1),
    ("128k tokens", "", 128e3),
    ("2^25", "", 2**25),
    ("2**25", "B", 2**25),
    ("2 ^ -3", "", 0.125),
    ("-2^2", "", -4),
    ("3 × 2^30 B", "B", 3 * 2**30),
    ("4 * 2**10 tokens", "", 4096),
    # Written as the prompts write them: superscript powers, × between factors.
    ("8192² B", "B", 8192**2),
    ("2⁻³", "", 0.125),
    ("8 × 32 × 8,192² × 2 bytes", "B", 8 * 32 * 8192**2 * 2),
    ("10¹² FLOP", "FLOP", 1e12),
])
def test_reads_lowercase_units_count_words_and_powers(text: str, unit: str, value: float) -> None:
    assert parse_quantity(text, unit).value == value


@pytest.mark.parametrize("text, unit, fragment", [
    ("10^999", "", "not a finite number"),
    ("1 x 10^999", "", "not a finite number"),
    ("0^-1", "", "not a finite number"),
    ("430 tokens", "B", "is a unit of a number"),
])
def test_powers_and_count_words_fail_cleanly(text: str, unit: str, fragment: str) -> None:
    with pytest.raises(UnitError, match=fragment):
        parse_quantity(text, unit)


def test_says_what_it_understood() -> None:
    assert parse_quantity("32 mib", "B").understood == "32 MiB (33,554,432 B)"
    assert parse_quantity("32 GiB", "B").understood == "32 GiB (34,359,738,368 B)"
    assert parse_quantity("268M", "params").understood.startswith("268M params")


@given(st.integers(min_value=0, max_value=2**52), st.sampled_from(["B", "FLOP", "params", ""]))
def test_exact_part_of_formatting_round_trips(value: int, unit: str) -> None:
    shown = format_quantity(value, unit)
    exact = shown.split("(")[-1].rstrip(")") if "(" in shown else shown
    assert parse_quantity(exact, unit).value == value


@given(st.floats(min_value=1, max_value=1e15), st.sampled_from(["GiB", "MiB", "GB", "KiB"]))
def test_display_unit_round_trips_within_display_precision(value: float, display: str) -> None:
    shown = format_quantity(value, "B", display).split(" (")[0]
    assert parse_quantity(shown, "B").value == pytest.approx(value, rel=1e-3, abs=2**30 * 1e-3)


def test_a_size_beyond_the_largest_prefix_is_shown_in_base_units() -> None:
    # issue 22: "4.2e+08 PFLOP" hid the size of a training run that "4.2e+23 FLOP" shows.
    assert format_quantity(4.2e23, "FLOP") == "4.2e+23 FLOP"
    assert format_quantity(4.2e20, "FLOP") == "420,000 PFLOP (4.2e+20 FLOP)"
