"""The smallest failing case as the report shows it: the case and the outputs that differ in it,
whole when small, else their first differing element."""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import Tensor

from quizprep.grader.compare import close_elements

if TYPE_CHECKING:
    from quizprep.grader.problem import Case


def describe_small(case: Case, actual: dict[str, Tensor]) -> str:
    """The case and the outputs that differ in it: whole when small, else their first differing
    element (an output that matches is left out, whatever its size)."""
    lines = [case.label]
    for name, expected in case.expected.items():
        got = actual[name]
        same_shape = tuple(got.shape) == tuple(expected.shape)
        if same_shape and name in case.tolerance:
            wrong = ~close_elements(got, expected, case.tolerance[name])
            if not bool(wrong.any()):
                continue
        if expected.numel() <= 24 and got.numel() <= 24:
            lines.append(f"  {name} expected: {_fmt(expected)}")
            lines.append(f"  {name} got:      {_fmt(got)}")
        elif same_shape and name in case.tolerance:
            index = tuple(int(i) for i in wrong.nonzero()[0])
            lines.append(f"  {name}{list(index)} expected {_fmt_value(expected[index])}, got {_fmt_value(got[index])} "
                         f"(the first of {int(wrong.sum())} of {got.numel()} elements that differ)")
    return "\n".join(lines)


def _fmt_value(value: Tensor) -> str:
    number = float(value)
    return "nan" if number != number else f"{number:.4g}"


def _fmt(tensor: Tensor) -> str:
    if tensor.dtype == torch.bool:
        return str(tensor.int().tolist())
    values = tensor.double().reshape(-1).tolist()
    body = ", ".join("nan" if v != v else f"{v:.4g}" for v in values)
    return f"shape {tuple(tensor.shape)} [{body}]"
