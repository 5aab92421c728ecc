"""Units for numeric answers: parse what a learner types, format what the app shows.

Binary prefixes (KiB, MiB, GiB, TiB) are powers of 1024; decimal ones (KB, MB, GB, TB, and the
bare suffixes k, M, G, T) are powers of 1000. For parameter counts and pure numbers `B` means
billion, as in "Llama-3-8B"; for memory it means bytes. A lowercase `b` after a prefix in its
proper case ("Mib", "Gb", "kb") means bits, as in networking; spelled all in lowercase ("mib",
"gb") it is read as bytes typed fast, since "m" and "g" are no prefixes. Units are matched
case-insensitively when that is unambiguous; what was understood is shown back.

A number may be arithmetic ("2^25", "2*2048*2048 B", "8*2^20", "3e9/2"), evaluated by the bank's
safe formula evaluator, never `eval`. A bare number is in the question's display unit ("Answer in
MiB": 8 is 8 MiB; "Answer in percent", display unit %: 31.85 is 31.85 %). Fractions may be
written as percentages ("14.8%"), factors as "4x" or "×4"; times in s, ms, min, h, days or weeks.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from enum import Enum
from fractions import Fraction
from typing import Callable

from quizprep.bank.formula import MAX_LITERAL, FormulaError, LiteralTooLarge, format_number, parse_arithmetic

UNITS = ("B", "FLOP", "params", "s", "")

SCIENTIFIC_FROM = 1e6  # numbers this large are written in e-notation
_UNIT_NAMES = {"B": "bytes", "FLOP": "FLOP", "params": "parameters", "s": "seconds", "": "a number",
               "bit": "bits"}

_DECIMAL = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
_COUNT_SUFFIX = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
_PREFIX_NAMES = {1: "", 1e3: "kilo", 1e6: "mega", 1e9: "giga", 1e12: "tera", 1e15: "peta", 1e18: "exa",
                 2**10: "kibi", 2**20: "mebi", 2**30: "gibi", 2**40: "tebi", 2**50: "pebi"}

# Unit words that may follow the number, mapped to (family, scale).
_SUFFIXES: dict[str, tuple[str, float]] = {}
_BITS: dict[str, tuple[str, float]] = {}  # matched in their exact case, or spelled out ("Mbit")
for _prefix, _scale in {**_DECIMAL, **_BINARY}.items():
    for _word in ("B", "byte", "bytes"):
        _SUFFIXES[_prefix + _word] = ("B", _scale)
    for _word in ("b", "bit", "bits"):
        _BITS[_prefix + _word] = ("bit", _scale)
    if _prefix not in _BINARY:
        for _word in ("FLOP", "FLOPs", "flop", "flops", "FLOPS"):
            _SUFFIXES[_prefix + _word] = ("FLOP", _scale)
_TIMES_OF_DAY = {"s": 1, "sec": 1, "second": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9,
                 "min": 60, "minute": 60, "h": 3600, "hr": 3600, "hour": 3600, "d": 86400, "day": 86400,
                 "wk": 7 * 86400, "week": 7 * 86400}
for _word, _scale in _TIMES_OF_DAY.items():
    for _spelling in {_word, _word + "s"} if len(_word) > 2 or _word == "hr" else {_word}:
        _SUFFIXES[_spelling] = ("s", _scale)
_SUFFIXES["%"] = ("", 0.01)  # a display unit: "Answer in percent" reads 31.85 as 31.85 %
for _prefix, _scale in _COUNT_SUFFIX.items():
    # Counts may name what they count; a plain number ("") is usually tokens.
    for _family, _words in (("params", ("params", "parameters", "param")), ("", ("tokens", "token"))):
        for _word in _words:
            _SUFFIXES[(_prefix + " " + _word).strip()] = (_family, _scale)
            _SUFFIXES[_prefix + _word] = (_family, _scale)


def _folded(table: dict[str, tuple[str, float]]) -> dict[str, tuple[str, float]]:
    """The lowercase spellings of `table` that mean one thing only."""
    meanings: dict[str, set[tuple[str, float]]] = {}
    for word, meaning in table.items():
        meanings.setdefault(word.lower(), set()).add(meaning)
    return {word: next(iter(found)) for word, found in meanings.items() if len(found) == 1}


_FOLDED_SUFFIXES = _folded(_SUFFIXES)
_FOLDED_BIT_WORDS = _folded({word: meaning for word, meaning in _BITS.items() if word.endswith(("bit", "bits"))})

# The number, up to its last digit, point or bracket, then the unit: letters, spaces, %, ×.
_NUMBER_AND_UNIT = re.compile(r"^\s*(?P<number>.*?[\d.)])\s*(?P<suffix>[^\d.()]*?)\s*$", re.DOTALL)
_FACTOR = re.compile(r"^\s*(?:[xX×]\s*(?P<leading>.*?)|(?P<trailing>.*?)\s*[xX×])\s*$", re.DOTALL)
_HEX = re.compile(r"(?<![\w.])0[xX][0-9a-fA-F]+")  # "0x10" is not 0 × 10
_DECIMAL_COMMA = re.compile(r"\d,\d")  # left once the thousands separators are gone: "1,5"
ECHO_CHARS = 40  # an answer quoted back in a message is cut to this length
_TIMES = re.compile(r"(?<=[\d.)])\s*[xX×·⋅]\s*(?=[\d.(])")  # "3.2 x 10^9", not a hex literal
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")  # "1,073,741,824"
_PLAIN_DECIMAL = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d{1,3})?")  # "14.8", "1.2e-3"
_LEADING_ZEROS = re.compile(r"(?<![\w.])0+(?=\d)")  # "08", which Python would refuse
# "8,192²", "2⁻²⁴": powers as the prompts write them, read as "^2", "^-24".
_SUPERSCRIPT = re.compile(r"⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_FROM_SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


class UnitError(ValueError):
    """Text that is not a number in the expected unit."""


class Reading(Enum):
    """How the written unit was taken, when that is worth saying back to the learner."""

    AS_WRITTEN = "as written"
    IMPLIED_UNIT = "a bare number, in the question's unit"
    BITS = "bits, converted to bytes"
    DECIMAL_SHORTHAND = "k, M, G, T as powers of 1000"
    PERCENT = "a percentage"
    FACTOR = "a factor"


@dataclass(frozen=True)
class Quantity:
    """A learner's answer: `value` in the base unit, `number` as written before its unit,
    `scale` base units per written unit."""

    value: float
    understood: str
    number: float = 0.0
    scale: float = 1.0
    reading: Reading = Reading.AS_WRITTEN


def parse_quantity(text: str, unit: str, display_unit: str | None = None) -> Quantity:
    """Read a learner's answer, e.g. "32 GiB", "3.4e10 B", "268M", "1.5 TFLOP", "7B params",
    "2*2048*2048 B"; a bare number is in `display_unit` when the question asks in one."""
    shown = text.strip()
    if len(shown) > ECHO_CHARS:
        shown = shown[:ECHO_CHARS - 1] + "…"
    hexadecimal = _HEX.search(text)
    if hexadecimal:
        literal = hexadecimal.group()
        raise UnitError(f"{literal!r} reads as hexadecimal; write it in decimal ({int(literal, 16)})")
    text = _SUPERSCRIPT.sub(lambda power: "^" + power.group().translate(_FROM_SUPERSCRIPT), text)
    reading = Reading.AS_WRITTEN
    factor = _FACTOR.match(text) if unit == "" else None
    if factor and display_unit == "%":  # 64x read as 64 % would be a hundredfold slip left unsaid
        raise UnitError(f"{shown!r}: x marks a factor; this question asks in percent, e.g. {example_for('%')}")
    if factor:
        text, reading = factor.group("leading") or factor.group("trailing") or "", Reading.FACTOR
    match = _NUMBER_AND_UNIT.match(text)
    if not match:
        raise UnitError(f"{shown!r} is not a number; try e.g. {example_for(unit)}")
    number = _evaluate(match.group("number"), shown, unit)
    unit, scale, reading = _read_unit(match.group("suffix"), unit, display_unit, reading)
    value = _scaled(number, scale)
    if not math.isfinite(value):
        raise UnitError(f"{shown!r} is not a finite number")
    if value < 0 and unit:
        raise UnitError(f"{shown!r} is negative; a number of {_UNIT_NAMES[unit]} cannot be")
    quantity = Quantity(value, "", float(number), scale, reading)
    return replace(quantity, understood=understood_text(quantity, unit, display_unit, match.group("suffix")))


def _evaluate(written: str, shown: str, unit: str) -> float | Fraction:
    """The written number; exact when it is a plain decimal, so that it is rounded only once."""
    source = written.replace("−", "-").replace("÷", "/").replace("^", "**")
    source = _LEADING_ZEROS.sub("", _THOUSANDS.sub("", _TIMES.sub("*", source)))
    try:
        formula = parse_arithmetic(source)
    except LiteralTooLarge:
        raise UnitError(f"{shown!r} is not a finite number of at most {MAX_LITERAL:g}") from None
    except FormulaError:
        if any(_is_unit(word, unit) for word in re.findall(r"[A-Za-zµμ]+", written)):
            raise UnitError(f"{shown!r}: write the unit once, at the end, e.g. \"4 * 8 MiB\"") from None
        if _DECIMAL_COMMA.search(source):
            raise UnitError(f"{shown!r}: write decimals with a point (1.5); a comma only groups "
                            "thousands (1,048,576)") from None
        raise UnitError(f"{shown!r} is not a number; try e.g. {example_for(unit)}") from None
    try:
        result = float(formula.evaluate({}))
    except (FormulaError, OverflowError):  # 10^999, 0^-1, 1/0
        raise UnitError(f"{shown!r} is not a finite number") from None
    plain = source.replace("_", "").strip()
    return Fraction(plain) if _PLAIN_DECIMAL.fullmatch(plain) else result


def _scaled(number: float | Fraction, scale: float) -> float:
    """number × scale rounded once: 14.8% is 0.148 and 1.2 ms 0.0012, as typed, not 0.14800000000000002."""
    exact_scale = Fraction(scale) if scale >= 1 else Fraction(1, round(1 / scale))
    if isinstance(number, Fraction):
        try:
            return float(number * exact_scale)
        except OverflowError:
            return math.inf
    return number * scale if scale >= 1 else number / exact_scale.denominator


def _is_unit(word: str, unit: str) -> bool:
    try:
        _read_suffix(word, unit)
    except UnitError:
        return False
    return True


def _read_unit(suffix: str, unit: str, display_unit: str | None,
               reading: Reading) -> tuple[str, float, Reading]:
    if suffix == "%":
        if unit:
            raise UnitError(f"% is for fractions; this question asks for {_UNIT_NAMES[unit]}")
        return unit, 0.01, Reading.PERCENT
    if suffix in ("x", "×"):
        raise UnitError(f"'{suffix}' marks a factor; this question asks for {_UNIT_NAMES[unit]}")
    if suffix == "" and display_unit and display_unit != unit:
        return unit, scale_of(display_unit, unit), Reading.IMPLIED_UNIT
    family, scale = _read_suffix(suffix, unit)
    if family == "bit" and unit == "B":
        return unit, scale / 8, Reading.BITS
    if family != unit:
        raise UnitError(f"expected {_UNIT_NAMES[unit]}, but {suffix!r} is a unit of {_UNIT_NAMES[family]}")
    if unit in ("B", "") and suffix.upper() in ("K", "M", "G", "T"):
        return unit, scale, Reading.DECIMAL_SHORTHAND
    return unit, scale, reading


def _read_suffix(suffix: str, unit: str) -> tuple[str, float]:
    if suffix == "":
        return unit, 1.0
    bare = {"params": _COUNT_SUFFIX, "": _COUNT_SUFFIX, "B": _DECIMAL, "FLOP": _DECIMAL}.get(unit, {})
    for spelling in (suffix, suffix.upper()):  # the bare prefixes are upper case but for k
        if spelling in bare:
            return unit, bare[spelling]
    for table, key in ((_SUFFIXES, suffix), (_BITS, suffix), (_FOLDED_SUFFIXES, suffix.lower()),
                       (_FOLDED_BIT_WORDS, suffix.lower())):
        if key in table:
            return table[key]
    raise UnitError(f"unknown unit {suffix!r}; try e.g. {example_for(unit)}")


def understood_text(quantity: Quantity, unit: str, display_unit: str | None, suffix: str) -> str:
    """What the app read, with what is worth knowing about how it read it. The number is in the
    question's display unit whatever unit was typed, so that it compares at a glance with the
    expected answer ("32 GB" read on a question in GB is "32 GB", not "29.8 GiB")."""
    asked_in = display_unit if display_unit != unit else None  # "FLOP" asked in FLOP: scale as usual
    value = format_quantity(quantity.value, unit, asked_in)
    number = format_number(quantity.number)
    if quantity.reading is Reading.BITS:
        return f"{value}: {suffix} means {bit_unit_name(quantity.scale)}, 8 to a byte"
    if quantity.reading is Reading.DECIMAL_SHORTHAND:
        power = decimal_power(quantity.scale)
        binary = exact_quantity(quantity.number * 1024**power, unit)
        written = f"{number} {suffix.upper()}iB" if unit else f"{number} × {powers_of('1024', power)}"
        return f"{value}: {suffix} means {powers_of('1000', power)}; {written} would be {binary}"
    if quantity.reading is Reading.PERCENT and display_unit != "%":
        return f"{value} ({number}%)"
    if quantity.reading is Reading.FACTOR:
        return f"{value}×"
    return value


def bit_unit_name(bytes_per_unit: float) -> str:
    """"mebibits" for the 2²⁰/8 bytes of one Mib."""
    return f"{_PREFIX_NAMES.get(bytes_per_unit * 8, '')}bits"


def decimal_power(scale: float) -> int:
    """3 for G (10⁹): the power of 1000, and of 1024 in the binary prefix it is mistaken for."""
    return round(math.log10(scale) / 3)


def powers_of(base: str, power: int) -> str:
    """"1000" or "1024²": a prefix's size as a power."""
    return base + ("" if power == 1 else "⁰¹²³⁴⁵⁶"[power])


EXAMPLES = {  # far apart in size, so that at most one can be a question's answer
    "B": ("32 GiB", "3.4e10 B", "512 MB"),
    "FLOP": ("1.5 TFLOP", "2.7e8"),
    "params": ("268M", "7B"),
    "s": ("1.2 ms", "0.5 s"),
    "": ("0.73", "2.7e8", "268M"),
    "%": ("31.85", "12.5"),  # a question asked in percent
}


def example_for(unit: str, right: Callable[[str], bool] | None = None) -> str:
    """How to write a number in `unit`: '"32 GiB", "3.4e10 B" or "512 MB"'; without any that
    `right` says is this question's answer (31.85 was the hint on a draw whose answer it was)."""
    shown = [f'"{text}"' for text in EXAMPLES[unit] if right is None or not right(text)]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def scale_of(display_unit: str, unit: str) -> float:
    """How many base units one display unit holds (GiB → 2**30 for bytes)."""
    family, scale = _read_suffix(display_unit, unit)
    if family != unit:
        raise UnitError(f"{display_unit!r} is not a unit of {_UNIT_NAMES[unit]}")
    return scale


def format_quantity(value: float, unit: str, display_unit: str | None = None) -> str:
    """Human-scaled text, with the exact base-unit value beside it when scaled."""
    scaled = scaled_quantity(value, unit, display_unit)
    exact = exact_quantity(value, unit)
    return scaled if scaled == exact else f"{scaled} ({exact})"


def scaled_quantity(value: float, unit: str, display_unit: str | None = None) -> str:
    """Human-scaled text alone: "8 MiB", "1.5 TFLOP"."""
    if display_unit:
        return f"{_significant(value / scale_of(display_unit, unit))} {display_unit}"
    return _auto_scale(value, unit)


def _auto_scale(value: float, unit: str) -> str:
    table: dict[str, float]
    if unit == "B":
        table = {"TiB": 2**40, "GiB": 2**30, "MiB": 2**20, "KiB": 2**10}
    elif unit == "FLOP":
        table = {"PFLOP": 1e15, "TFLOP": 1e12, "GFLOP": 1e9, "MFLOP": 1e6}
    elif unit == "params":
        table = {"T params": 1e12, "B params": 1e9, "M params": 1e6, "K params": 1e3}
    elif unit == "s":
        if value == 0 or abs(value) >= 1:
            return f"{_significant(value)} s"
        table = {"ms": 1e-3, "µs": 1e-6, "ns": 1e-9}
    else:
        return exact_quantity(value, unit)
    for name, scale in table.items():
        if abs(value) >= scale:
            if abs(value) / scale >= SCIENTIFIC_FROM:  # "4.2e+08 PFLOP" hides the size "4.2e+23 FLOP" shows
                return exact_quantity(value, unit)
            joiner = "" if name.startswith(("T ", "B ", "M ", "K ")) else " "
            return f"{_significant(value / scale)}{joiner}{name}"
    return exact_quantity(value, unit)


def exact_quantity(value: float, unit: str) -> str:
    """The value in the base unit, every digit of an integer: "131,072 B"."""
    names = {"B": " B", "FLOP": " FLOP", "params": " params", "s": " s", "": ""}
    if float(value).is_integer() and abs(value) < 1e16:
        return f"{int(value):,}{names[unit]}"
    return f"{_significant(value)}{names[unit]}"


def _significant(value: float) -> str:
    if value != 0 and (abs(value) >= SCIENTIFIC_FROM or abs(value) < 1e-3):
        return f"{value:.4g}"
    return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.1f}".rstrip("0").rstrip(".")
