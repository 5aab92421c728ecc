"""The numbers of a numeric question: parameter values, tolerances, and which draws the checker
evaluates within a bounded amount of work.

Every number a bank writes is finite and at most MAX_LITERAL in size, so no draw, tolerance or
answer can be infinite, NaN, or too large to compare as a float."""
from __future__ import annotations

import itertools
import math
import random
from typing import Any, Iterator, Sequence

from quizprep.bank.formula import MAX_LITERAL
from quizprep.bank.linedict import LineDict
from quizprep.bank.model import ParamSpec, Tolerance

MAX_PARAM_VALUES = 10_000
MAX_CHECKED_DRAWS = 400
MIN_CHECKED_DRAWS = 5
# The audit of `quizprep check` (tolerance leaks, answers stated by a predecessor) looks further:
# every combination, or this many draws, within half the validator's per-file work budget (a
# shipped bank needs a fraction of it; a hostile one costs the check at most 1.5× validation).
AUDIT_DRAWS = 2000
# Work one bank file may spend on checking draws, in formula steps (syntax-tree nodes evaluated):
# about two seconds, so that any file within the 2 MiB limit checks in well under 10 s
# (benchmarks/bank_check.py). Setting up one draw costs about as much as DRAW_STEPS steps.
FILE_WORK_BUDGET = 8_000_000
DRAW_STEPS = 10


def param_name(name: Any) -> str:
    if not isinstance(name, str) or not name.isidentifier() or name == "answer":
        raise ValueError("names are identifiers (letters, digits, _) and 'answer' is reserved")
    return name


def number(value: Any) -> int | float:
    """A finite number no larger than MAX_LITERAL; anything else raises ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"expected a number, got {value!r}")
    if not abs(value) <= MAX_LITERAL:  # also false for NaN
        shown = repr(value) if isinstance(value, float) or value.bit_length() < 200 else "a huge integer"
        raise ValueError(f"{shown} is not a finite number of at most {MAX_LITERAL:g}")
    return value


def param_values(value: Any) -> tuple[int | float, ...]:
    if not isinstance(value, LineDict):
        return (number(value),)
    if set(value) == {"choices"}:
        options = value["choices"]
        if not isinstance(options, list) or not options:
            raise ValueError("choices must be a non-empty list of numbers")
        return tuple(number(v) for v in options)
    if set(value) in ({"range"}, {"range", "step"}):
        bounds = value["range"]
        if not isinstance(bounds, list) or len(bounds) != 2:
            raise ValueError("range is [low, high]")
        low, high = map(number, bounds)
        step = number(value.get("step", 1))
        if step <= 0 or high < low:
            raise ValueError("range needs low ≤ high and a positive step")
        steps = (high - low) / step  # may overflow to inf for a tiny step: still too many values
        if not steps < MAX_PARAM_VALUES - 0.5:  # round(steps) + 1 values
            raise ValueError(f"range has more than {MAX_PARAM_VALUES:,} values")
        count = int(round(steps)) + 1
        if isinstance(low, int) and isinstance(high, int) and isinstance(step, int):
            return tuple(range(low, low + count * step, step))
        return tuple(round(low + i * step, 12) for i in range(count))
    raise ValueError("a parameter is a number, {choices: [...]} or {range: [low, high], step: s}")


def tolerance_from(raw: Any) -> Tolerance:
    """A relative fraction in (0, 1), {rel: x} with x in (0, 1), or {abs: x} with x > 0.

    A relative tolerance of 1 or more would accept 0 for every answer."""
    kind, value = "rel", raw
    if isinstance(raw, LineDict) and len(raw) == 1:
        (kind, value), = raw.items()
    try:
        amount = float(number(value))
    except ValueError:
        amount = math.nan
    if kind == "rel" and 0 < amount < 1:
        return Tolerance(relative=amount)
    if kind == "abs" and amount > 0:
        return Tolerance(absolute=amount)
    shown = repr(raw) if len(repr(raw)) <= 60 else f"{repr(raw)[:50]}…"
    raise ValueError(f"tolerance must be a relative fraction in (0, 1), {{rel: x}} with x in (0, 1) "
                     f"or {{abs: x}} with a finite x > 0, got {shown}")


def draw_count(params: Sequence[ParamSpec]) -> int:
    """How many draws a full check evaluates: every combination, or the extremes and a sample."""
    total = math.prod(len(p.values) for p in params)
    return total if total <= MAX_CHECKED_DRAWS else MAX_CHECKED_DRAWS + 2


def audit_count(params: Sequence[ParamSpec]) -> int:
    """How many draws the audit wants: every combination, or AUDIT_DRAWS of them."""
    return min(math.prod(len(p.values) for p in params), AUDIT_DRAWS)


def sample_draws(params: Sequence[ParamSpec], count: int | None = None) -> Iterator[dict[str, int | float]]:
    """The draws a check evaluates: every combination when there are at most `count` (default
    MAX_CHECKED_DRAWS), else all-minimum, all-maximum and `count - 2` seeded random draws."""
    names = [p.name for p in params]
    limit = MAX_CHECKED_DRAWS if count is None else count
    if math.prod(len(p.values) for p in params) <= limit:
        for combo in itertools.product(*(p.values for p in params)):
            yield dict(zip(names, combo))
        return
    yield {p.name: min(p.values) for p in params}
    yield {p.name: max(p.values) for p in params}
    rng = random.Random(0)
    for _ in range(MAX_CHECKED_DRAWS if count is None else count - 2):
        yield {p.name: rng.choice(p.values) for p in params}


def draw_cost(params: Sequence[ParamSpec], formula_steps: int) -> int:
    """The work of checking one draw: drawing each parameter, then evaluating every formula."""
    return DRAW_STEPS + len(params) + formula_steps


def share_draws(wanted: Sequence[tuple[int, int]], budget: int | None = None) -> list[int]:
    """Draws each question may check, given (draws wanted, cost of one draw) per question: the
    cheapest questions first take what they want of an equal share, and what they leave goes to
    the costlier ones. A question whose share is below the minimum number of draws gets none
    (the caller reports it unchecked). The total never exceeds `budget` (default FILE_WORK_BUDGET)."""
    granted = [0] * len(wanted)
    left, remaining = FILE_WORK_BUDGET if budget is None else budget, len(wanted)
    for index in sorted(range(len(wanted)), key=lambda i: wanted[i][1]):
        draws, cost = wanted[index]
        affordable = min(draws, left // remaining // max(cost, 1))
        if affordable >= min(draws, MIN_CHECKED_DRAWS):
            granted[index] = affordable
            left -= affordable * cost
        remaining -= 1
    return granted
