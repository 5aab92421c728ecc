"""Units for numeric answers: parse what a learner types, format what the app shows.

Binary prefixes (KiB, MiB, GiB, TiB) are powers of 1024; decimal ones (KB, MB, GB, TB, and the
bare suffixes k, M, G, T) are powers of 1000. For parameter counts and pure numbers `B` means
billion, as in "Llama-3-8B"; for memory it means bytes. Units are matched case-insensitively when
that is unambiguous ("32 mib"), since learners type fast; what was understood is shown back.
A number may be a power ("2^25", "2**25", "3 × 2^30").
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

UNITS = ("B", "FLOP", "params", "s", "")

SCIENTIFIC_FROM = 1e6  # numbers this large are written in e-notation
_UNIT_NAMES = {"B": "bytes", "FLOP": "FLOP", "params": "parameters", "s": "seconds", "": "a number"}

_DECIMAL = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
_COUNT_SUFFIX = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}

# Unit words that may follow the number, mapped to (family, scale).
_SUFFIXES: dict[str, tuple[str, float]] = {}
for _prefix, _scale in {**_DECIMAL, **_BINARY}.items():
    for _word in ("B", "byte", "bytes"):
        _SUFFIXES[_prefix + _word] = ("B", _scale)
    if _prefix not in _BINARY:
        for _word in ("FLOP", "FLOPs", "flop", "flops", "FLOPS"):
            _SUFFIXES[_prefix + _word] = ("FLOP", _scale)
for _word, _scale in {"s": 1, "sec": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9}.items():
    _SUFFIXES[_word] = ("s", _scale)
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

# A number: a sign, digits (with thousands separators), then an e-exponent, a power of the
# number itself ("2^25") or a power of a second base ("3.2 × 10^9", "3 × 2^30").
_NUMBER = re.compile(
    r"""^\s*(?P<sign>[-+]?)
        (?P<mantissa>(?:\d{1,3}(?:,\d{3})+|\d[\d_]*|\d*\.\d+|\d[\d_]*\.\d*)(?:\.\d*)?(?:[eE][-+]?\d+)?)
        (?:\s*(?:\^|\*\*)\s*(?P<exponent>[-+]?\d+)
          |\s*[×x*]\s*(?P<base>\d+)\s*(?:\^|\*\*)\s*(?P<power>[-+]?\d+))?
        \s*(?P<suffix>.*?)\s*$""",
    re.VERBOSE,
)


class UnitError(ValueError):
    """Text that is not a number in the expected unit."""


@dataclass(frozen=True)
class Quantity:
    value: float
    understood: str


def parse_quantity(text: str, unit: str) -> Quantity:
    """Read a learner's answer, e.g. "32 GiB", "3.4e10 B", "268M", "1.5 TFLOP", "7B params"."""
    match = _NUMBER.match(text)
    if not match or not text.strip():
        raise UnitError(f"{text.strip()!r} is not a number; try e.g. {example_for(unit)}")
    suffix = match.group("suffix")
    family, scale = _read_suffix(suffix, unit)
    if family != unit:
        raise UnitError(
            f"expected {_UNIT_NAMES[unit]}, but {suffix!r} is a unit of {_UNIT_NAMES[family]}"
        )
    try:
        value = _read_number(match) * scale
    except (OverflowError, ZeroDivisionError):  # 10^999, 0^-1
        value = math.inf
    if not math.isfinite(value):
        raise UnitError(f"{text.strip()!r} is not a finite number")
    return Quantity(value, f"{format_quantity(value, unit)}")


def _read_number(match: re.Match[str]) -> float:
    """The matched number; raises OverflowError (ZeroDivisionError) for powers beyond a float (of 0)."""
    value = float(match.group("mantissa").replace(",", "").replace("_", ""))
    if match.group("exponent"):
        value **= int(match.group("exponent"))
    elif match.group("power"):
        value *= float(match.group("base")) ** int(match.group("power"))
    return -value if match.group("sign") == "-" else value


def _read_suffix(suffix: str, unit: str) -> tuple[str, float]:
    if suffix == "":
        return unit, 1.0
    bare = {"params": _COUNT_SUFFIX, "": _COUNT_SUFFIX, "B": _DECIMAL, "FLOP": _DECIMAL}.get(unit, {})
    for spelling in (suffix, suffix.upper()):  # the bare prefixes are upper case but for k
        if spelling in bare:
            return unit, bare[spelling]
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    if suffix.lower() in _FOLDED_SUFFIXES:
        return _FOLDED_SUFFIXES[suffix.lower()]
    raise UnitError(f"unknown unit {suffix!r}; try e.g. {example_for(unit)}")


def example_for(unit: str) -> str:
    return {
        "B": '"32 GiB", "3.4e10 B" or "512 MB"',
        "FLOP": '"1.5 TFLOP" or "2.7e8"',
        "params": '"268M" or "7B"',
        "s": '"1.2 ms" or "0.5 s"',
        "": '"0.73", "2.7e8" or "268M"',
    }[unit]


def scale_of(display_unit: str, unit: str) -> float:
    """How many base units one display unit holds (GiB → 2**30 for bytes)."""
    family, scale = _read_suffix(display_unit, unit)
    if family != unit:
        raise UnitError(f"{display_unit!r} is not a unit of {_UNIT_NAMES[unit]}")
    return scale


def format_quantity(value: float, unit: str, display_unit: str | None = None) -> str:
    """Human-scaled text, with the exact base-unit value beside it when scaled."""
    if display_unit:
        scaled = f"{_significant(value / scale_of(display_unit, unit))} {display_unit}"
    else:
        scaled = _auto_scale(value, unit)
    exact = _exact(value, unit)
    return scaled if scaled == exact else f"{scaled} ({exact})"


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
        return _exact(value, unit)
    for name, scale in table.items():
        if abs(value) >= scale:
            if abs(value) / scale >= SCIENTIFIC_FROM:  # "4.2e+08 PFLOP" hides the size "4.2e+23 FLOP" shows
                return _exact(value, unit)
            joiner = "" if name.startswith(("T ", "B ", "M ", "K ")) else " "
            return f"{_significant(value / scale)}{joiner}{name}"
    return _exact(value, unit)


def _exact(value: float, unit: str) -> str:
    names = {"B": " B", "FLOP": " FLOP", "params": " params", "s": " s", "": ""}
    if float(value).is_integer() and abs(value) < 1e16:
        return f"{int(value):,}{names[unit]}"
    return f"{_significant(value)}{names[unit]}"


def _significant(value: float) -> str:
    if value != 0 and (abs(value) >= SCIENTIFIC_FROM or abs(value) < 1e-3):
        return f"{value:.4g}"
    return f"{value:,.4g}" if abs(value) < 1000 else f"{value:,.1f}".rstrip("0").rstrip(".")
