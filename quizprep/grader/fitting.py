"""Names from the numbers: common transformations of the expected outputs that give the learner's.

When no exercise hypothesis reproduces the outputs, code written in another style often differs
from the reference by one transformation that its own idiom made natural: a reduction that kept
its dimension, attention weights averaged over heads (nn.MultiheadAttention's default), the
scores returned where the softmax of them belongs, or the last queries' rows left out. Each fit
must reproduce every differing output; outputs that already match must not be the ones it changes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import torch
from torch import Tensor

from quizprep.grader.compare import close_elements
from quizprep.grader.lessons import lesson
from quizprep.grader.spec import Diagnosis

if TYPE_CHECKING:
    from quizprep.grader.problem import Case

SLACK = 4.0  # a transformed reference is compared at a few times the tolerance, as hypotheses are


def fit(case: Case, actual: dict[str, Tensor]) -> Diagnosis | None:
    """The one transformation that explains every output that differs, or None."""
    differing = [name for name, expected in case.expected.items() if not _same(case, name, actual[name], expected)]
    if not differing:
        return None
    for transformation in TRANSFORMATIONS:
        found = [transformation(case, name, actual[name]) for name in differing]
        named = [diagnosis for diagnosis in found if diagnosis is not None]
        if len(named) == len(found) and len({d.id for d in named}) == 1:
            return named[0]
    return None


def _same(case: Case, name: str, got: Tensor, want: Tensor) -> bool:
    return tuple(got.shape) == tuple(want.shape) and bool(close_elements(got, want, case.tolerance[name]).all())


def _close(case: Case, name: str, got: Tensor, want: Tensor) -> bool:
    return tuple(got.shape) == tuple(want.shape) and \
        bool(close_elements(got, want, case.tolerance[name].scaled(SLACK)).all())


def _kept_dimension(case: Case, name: str, got: Tensor) -> Diagnosis | None:
    want = case.expected[name]
    if got.dim() <= want.dim() or [s for s in got.shape if s != 1] != [s for s in want.shape if s != 1]:
        return None
    if not _close(case, name, got.reshape(want.shape), want):
        return None
    return Diagnosis("kept-dim", f"`{name}` has shape {tuple(got.shape)}, expected {tuple(want.shape)}: the values "
                      "are right, but a reduction kept its dimension (keepdim=True) or an unsqueeze was never undone",
                      "Return the contract's shape: reduce without keepdim (or .squeeze(-1) the result) once the "
                      "broadcasting it was kept for is done.", lesson("softmax-axis"))


def _head_averaged(case: Case, name: str, got: Tensor) -> Diagnosis | None:
    want, dims = case.expected[name], case.dims.get(name, ())
    if "head" not in dims or len(dims) != want.dim() or got.dim() != want.dim() - 1:
        return None
    averaged = want.mean(dim=dims.index("head"))
    if not _close(case, name, got, averaged):
        return None
    return Diagnosis("weights-head-averaged", f"`{name}` has shape {tuple(got.shape)}: the weights are averaged "
                      f"over the heads, expected one map per head {tuple(want.shape)}",
                      "Return the weights of every head, (B, H, n, m): nn.MultiheadAttention averages them only "
                      "because average_attn_weights=True is its default.", lesson("multihead-split-transpose"))


def _query_rows_dropped(case: Case, name: str, got: Tensor) -> Diagnosis | None:
    want, dims = case.expected[name], case.dims.get(name, ())
    if "query" not in dims or got.dim() != want.dim():
        return None
    axis = dims.index("query")
    kept = got.shape[axis]
    if not 0 < kept < want.shape[axis] or not _close(case, name, got, want.narrow(axis, 0, kept)):
        return None  # _close also holds every other axis to the expected size
    missing = want.shape[axis] - kept
    return Diagnosis("query-rows-dropped", f"`{name}` has {kept} query rows for {want.shape[axis]} queries: the "
                      f"first {kept} are right and the last {missing} are missing. Queries processed in chunks lose "
                      "a short last chunk this way, or a mask sliced per chunk along an axis it broadcasts (a "
                      "(B, 1, 1, m) padding mask has one query row: later chunks get an empty slice, and a chunk "
                      "of one query broadcasts to no rows)",
                      "Cover every query (slice [start:start + size] up to n, the last chunk may be shorter), and "
                      "broadcast the mask to (..., n, m) before slicing it by query.", lesson("masking-padding-keys"))


def _logits_as_weights(case: Case, name: str, got: Tensor) -> Diagnosis | None:
    want = case.expected[name]
    if name != "weights" or got.shape != want.shape or got.dim() == 0:
        return None
    logits = got.double()
    hidden = want == 0  # masked keys: the reference gives them exactly zero weight
    for scores in (logits, logits.masked_fill(hidden, float("-inf"))):
        finite_rows = torch.isfinite(scores).any(dim=-1, keepdim=True)
        if _close(case, name, torch.where(finite_rows, scores.softmax(dim=-1), want), want):
            return Diagnosis("weights-are-logits", "the returned weights are the scores before the softmax: "
                              "their softmax is the expected weights", "Return softmax(scores) as the weights, the "
                              "same tensor that multiplies V, not the scaled logits.", lesson("softmax-axis"))
    return None


TRANSFORMATIONS: tuple[Callable[[Case, str, Tensor], Diagnosis | None], ...] = (
    _kept_dimension, _head_averaged, _logits_as_weights, _query_rows_dropped)
