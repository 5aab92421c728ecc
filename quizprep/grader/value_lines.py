"""The learner's line for a mistake whose ops look like correct code's (a subtraction left out, a
matmul without its transpose, positions from 0): found by the values its lines compute.

A mistake's `ValueTell` is data: for a case, the float64 intermediates that only the mistaken
recurrence computes (its telltales, each under the output it leads to) and those correct code
computes in their place. The failing case is replayed once with the worker sampling each learner
op's result (`learner_side/op_recorder.py`: values at evenly spaced ranks, drawn from the result's
values alone, so any order, broadcast, tile or slice of a telltale samples telltale values), and the
first line whose sample lies among the telltales' values, within its dtype's rounding, is quoted,
unless the sample lies wholly among the correct intermediates', the inputs' and the expected
outputs' values too: a line whose value is the same with and without the mistake is
never quoted, and neither is any line when none holds a telltale. Telltales count only for outputs
the learner got wrong (a scale missing from dK says nothing of the line that makes dQ), and whole
numbers only for whole-number telltales (an arange of features is no row of an angle table).
A boolean mask is sampled by the keys it keeps on each row (`kept`: a length mask one key off keeps
seq_lens ± 1), and where two tables' values are the same with and without a swap, the names the
replay saw them bound to tell it (bound_names.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import torch
from torch import Tensor

from quizprep.grader.compare import find_mismatch
from quizprep.grader.learner_side.op_recorder import BOUND

if TYPE_CHECKING:
    from quizprep.grader.bound_names import Naming
    from quizprep.grader.problem import Case

F64 = torch.float64
# a value's rounding: 16-bit results are held to bfloat16's, the coarser; integers must be equal
UNIT_ROUNDOFF = {"half": 2.0**-8, "float": 2.0**-24, "int": 0.0}
ROUNDING_SLACK = 64.0  # roundings of the few ops between the inputs and an intermediate
MIN_DISTINCT = 3  # a sample of fewer distinct values (zeros, ones, a single position) tells nothing
TELLTALE, UNTOLD, ABSENT = "telltale", "untold", "absent"  # what an op's sample says of the mistake


def same_sizes(sizes: dict[str, int]) -> dict[str, int]:
    return sizes


def no_telltales(case: Case) -> dict[str, list[Tensor]]:
    return {}


def no_values(case: Case) -> list[Tensor]:
    return []


@dataclass(frozen=True)
class ValueTell:
    telltales: Callable[[Case], dict[str, list[Tensor]]] = no_telltales  # output -> what only the mistake computes
    correct: Callable[[Case], list[Tensor]] = no_values  # what correct code computes in their place
    sizes: Callable[[dict[str, int]], dict[str, int]] = same_sizes  # a case with enough distinct values
    # how many keys a boolean mask keeps on each row with the mistake (a length one off), and without it
    kept: Callable[[Case], tuple[Tensor, Tensor]] | None = None
    # what the names of tables hold (bound_names.py): a swap of two tables is told by their names alone
    names: Callable[[Case], Naming] | None = None


def told_line(tell: ValueTell, case: Case, outputs: dict[str, Tensor], ops: list[dict[str, Any]],
              owned: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any] | None:
    """The first recorded op whose sampled result holds telltale values of outputs that are wrong in
    `outputs` and not only correct ones, or the first binding of a table under a name that says
    otherwise (a swap of two tables, told by `tell.names`); None when no op does. Where the mistake's
    family of ops is known (`owned`), an untold first op of the family is quoted too: the family says
    which op the mistake lives in, the values which line's op it is, so long as no other line's op of
    the family holds the telltales' values (the queries' positions apart from the keys')."""
    known = _known(tell, case, outputs)
    if known is None:
        return None
    naming = tell.names(case) if tell.names is not None else None
    for op in ops:
        if op["op"] == BOUND:
            if naming is not None and naming.misnamed(op):
                return op if naming.made_on_its_line(op, ops) else None
            continue
        verdict = known.verdict(op)
        if verdict == TELLTALE:
            return op if naming is None or naming.vouched(op, ops) else None
        if verdict != ABSENT:
            return op if owned is not None and owned(op) and _one_line_of_family(known, ops, owned) else None
    return None


def _one_line_of_family(known: Known, ops: list[dict[str, Any]], owned: Callable[[dict[str, Any]], bool]) -> bool:
    """Whether the ops of the mistake's family that hold known values all sit on one line."""
    return len({op["line"] for op in ops if op["op"] != BOUND and owned(op) and known.verdict(op) != ABSENT}) == 1


def _known(tell: ValueTell, case: Case, outputs: dict[str, Tensor]) -> Known | None:
    """The values of the telltales of the outputs `outputs` gets wrong, and of correct code (and the
    keys a mask keeps per row); None when no wrong output has a telltale."""
    wrong = {name for name, expected in case.expected.items()
             if name in outputs and find_mismatch(name, outputs[name], expected, case.tolerance[name]) is not None}
    telltales = [value for name, values in tell.telltales(case).items() if name in wrong for value in values]
    kept = tell.kept(case) if tell.kept is not None and wrong else (torch.empty(0), torch.empty(0))
    if not telltales and not len(kept[0]):
        return None
    inputs = [value for value in case.data.values() if isinstance(value, Tensor) and value.dtype != torch.bool]
    return Known(_joined([value for value in telltales if not _whole(value)]),
                 _joined([value for value in telltales if _whole(value)]),
                 _joined([*tell.correct(case), *inputs, *case.expected.values()]),
                 _joined([kept[0]]), _joined([kept[1]]))


@dataclass(frozen=True)
class Known:
    """The values a mistake's telltales hold (whole numbers apart: positions, indices) and those correct
    code holds, each sorted; and the keys a mask keeps per row with the mistake and without it."""
    telltale: Tensor
    whole_telltale: Tensor
    correct: Tensor
    kept_telltale: Tensor
    kept_correct: Tensor

    def verdict(self, op: dict[str, Any]) -> str:
        """TELLTALE where `op`'s sample lies among the telltales' values, with the same whole-numberness
        (an arange of features is no row of an angle table), and not all among the correct ones;
        UNTOLD where it lies among both and spans the telltales' whole range: it may be the mistake's
        own line, and the lines after it may only compute from it; ABSENT otherwise. A mask's counts
        of kept keys are judged alike, and exactly."""
        if op.get("kept"):
            return judged(sorted_values(op["kept"]), self.kept_telltale, self.kept_correct, 0.0)
        sample = sorted_values(op.get("sample") or [])
        kind = str(op.get("result", "")).rstrip("0123456789")
        if kind not in UNIT_ROUNDOFF or len(sample) == 0:
            return ABSENT
        telltale = self.whole_telltale if _whole(sample) else self.telltale
        scale = max(float(self.telltale.abs().max()) if len(self.telltale) else 0.0, 1.0)
        return judged(sample, telltale, self.correct, ROUNDING_SLACK * UNIT_ROUNDOFF[kind] * scale)


def judged(sample: Tensor, telltale: Tensor, correct: Tensor, tolerance: float) -> str:
    """What a sorted sample says of the mistake whose values are `telltale`, correct code's `correct`."""
    if int((sample.diff() > tolerance).sum()) + 1 < MIN_DISTINCT or not among(sample, telltale, tolerance):
        return ABSENT
    if not among(sample, correct, tolerance):
        return TELLTALE
    spans = among(telltale[[0, -1]], sample, tolerance)
    return UNTOLD if spans else ABSENT


def among(sample: Tensor, values: Tensor, tolerance: float) -> bool:
    """Every sampled value is within `tolerance` of one of `values` (sorted)."""
    if len(values) == 0:
        return False
    above = torch.searchsorted(values, sample).clamp(max=len(values) - 1)
    below = (above - 1).clamp(min=0)
    nearest = torch.minimum((values[above] - sample).abs(), (values[below] - sample).abs())
    return bool((nearest <= tolerance).all())


def sorted_values(numbers: list[float]) -> Tensor:
    """A sample's numbers in float64, sorted."""
    return torch.tensor(numbers, dtype=F64).sort().values


def _joined(values: list[Tensor]) -> Tensor:
    """Every finite value of `values`, in float64, sorted."""
    if not values:
        return torch.empty(0, dtype=F64)
    flat = torch.cat([value.detach().flatten().to(F64) for value in values])
    return flat[torch.isfinite(flat)].sort().values


def _whole(values: Tensor) -> bool:
    return bool((values == values.round()).all())
