"""The learner's line for a mistake whose ops look like correct code's (a subtraction left out, a
matmul without its transpose, positions from 0): found by the values its lines compute.

A mistake's `ValueTell` is data: for a case, the float64 intermediates that only the mistaken
recurrence computes (its telltales, each under the output it leads to) and those correct code
computes in their place. The failing case is replayed once with the worker sampling each learner
op's result (`learner_side/op_recorder.py`: values at fixed ranks, the same for any order,
broadcast or slice of a tensor), and the first line whose sample lies among a telltale's values,
within its dtype's rounding, is quoted, unless the sample also lies among a correct intermediate's,
an input's or an expected output's: a line whose value is the same with and without the mistake is
never quoted, and neither is any line when none holds a telltale. Telltales count only for outputs
the learner got wrong (a scale missing from dK says nothing of the line that makes dQ), and whole
numbers only for whole-number telltales (an arange of features is no row of an angle table).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import torch
from torch import Tensor

from quizprep.grader.compare import find_mismatch

if TYPE_CHECKING:
    from quizprep.grader.problem import Case

F64 = torch.float64
# a value's rounding: 16-bit results are held to bfloat16's, the coarser; integers must be equal
UNIT_ROUNDOFF = {"half": 2.0**-8, "float": 2.0**-24, "int": 0.0}
ROUNDING_SLACK = 64.0  # roundings of the few ops between the inputs and an intermediate
MIN_DISTINCT = 3  # a sample of fewer distinct values (zeros, ones, a single position) tells nothing


def same_sizes(sizes: dict[str, int]) -> dict[str, int]:
    return sizes


@dataclass(frozen=True)
class ValueTell:
    telltales: Callable[[Case], dict[str, list[Tensor]]]  # output name -> what only the mistake computes
    correct: Callable[[Case], list[Tensor]]  # what correct code computes in their place
    sizes: Callable[[dict[str, int]], dict[str, int]] = same_sizes  # a case with enough distinct values


def told_line(tell: ValueTell, case: Case, outputs: dict[str, Tensor],
              ops: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first recorded op whose sampled result holds a telltale of an output that is wrong in
    `outputs` and no correct value; None when no op does."""
    wrong = {name for name, expected in case.expected.items()
             if name in outputs and find_mismatch(name, outputs[name], expected, case.tolerance[name]) is not None}
    telltales = [_sorted(value) for name, values in tell.telltales(case).items() if name in wrong for value in values]
    if not telltales:
        return None
    inputs = [value for value in case.data.values() if isinstance(value, Tensor) and value.dtype != torch.bool]
    correct = [_sorted(value) for value in [*tell.correct(case), *inputs, *case.expected.values()]]
    return next((op for op in ops if _telltale_only(op, telltales, correct)), None)


def _telltale_only(op: dict[str, Any], telltales: list[Tensor], correct: list[Tensor]) -> bool:
    sample = torch.tensor(op.get("sample") or [], dtype=F64)
    kind = str(op.get("result", "")).rstrip("0123456789")
    if kind not in UNIT_ROUNDOFF or len(sample) == 0:
        return False
    scale = max([float(values.abs().max()) for values in telltales if len(values)] + [1.0])
    tolerance = ROUNDING_SLACK * UNIT_ROUNDOFF[kind] * scale
    if int((sample.diff() > tolerance).sum()) + 1 < MIN_DISTINCT:
        return False
    whole = bool((sample == sample.round()).all())  # positions, indices: they match only integer telltales
    return (any(among(sample, values, tolerance) for values in telltales if _whole(values) == whole)
            and not any(among(sample, values, tolerance) for values in correct))


def among(sample: Tensor, values: Tensor, tolerance: float) -> bool:
    """Every sampled value is within `tolerance` of one of `values` (sorted)."""
    if len(values) == 0:
        return False
    above = torch.searchsorted(values, sample).clamp(max=len(values) - 1)
    below = (above - 1).clamp(min=0)
    nearest = torch.minimum((values[above] - sample).abs(), (values[below] - sample).abs())
    return bool((nearest <= tolerance).all())


def _sorted(value: Tensor) -> Tensor:
    flat = value.detach().flatten().to(F64)
    return flat[torch.isfinite(flat)].sort().values


def _whole(values: Tensor) -> bool:
    return bool((values == values.round()).all())
