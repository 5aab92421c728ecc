"""Naming what broke when no classic mistake reproduces the learner's outputs.

The hypotheses in each exercise predict whole outputs; code nobody here wrote often has a bug
none of them predicts. Then a structural property of the outputs still says what kind of bug
it is: NaN or inf where the answer is defined, errors of one precision's size, dropout left on,
weight on masked-out keys, weight rows that do not sum to 1, or differences confined to some
heads or rows. Each finding is a
:class:`~quizprep.grader.problem.Diagnosis` like the hypotheses', so reports treat them alike.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from quizprep.grader.compare import close_elements, index_ranges, indices_along, plural, precision_explaining
from quizprep.grader.learner_source import constant_beyond
from quizprep.grader.lessons import lesson
from quizprep.grader.spec import Diagnosis

if TYPE_CHECKING:
    from quizprep.grader.context import CheckContext
    from quizprep.grader.problem import Case, Problem

MASKED_REGION = "at masked-out keys (should be 0)"


def explain(ctx: CheckContext, problem: Problem, case: Case, actual: dict[str, Tensor],
            options: dict[str, Any] | None) -> Diagnosis | None:
    """The first structural property that `actual` breaks, the most specific first: at large logits
    any wrong answer is within a coarse precision's reach, so precision comes after the others.
    Every property compares element by element: outputs of another shape have none of them."""
    if any(actual[name].shape != expected.shape for name, expected in case.expected.items()):
        return None
    return (_nonfinite(case, actual, ctx) or _dropout(ctx, problem, case, actual, options)
            or _masked_keys(case, actual) or _unnormalised(case, actual) or _precision(case, actual)
            or _partial(case, actual))


def same_values(first: dict[str, Tensor], second: dict[str, Tensor]) -> bool:
    """Equal outputs, NaN equal to NaN (a fully masked row may be NaN in both)."""
    return all(first[name].shape == second[name].shape
               and bool(torch.equal(first[name].isnan(), second[name].isnan()))
               and bool((first[name].nan_to_num() == second[name].nan_to_num()).all()) for name in first)


def _defined(case: Case, name: str, actual: Tensor) -> tuple[Tensor, Tensor]:
    expected = case.expected[name]
    where = ~torch.isnan(expected)
    return actual.double()[where], expected[where]


def _nonfinite(case: Case, actual: dict[str, Tensor], ctx: CheckContext) -> Diagnosis | None:
    """NaN or inf where the reference is finite: no wrong formula gives that, a 0·inf or inf − inf
    does (a -inf bias multiplied by the mask, a softmax over a row of -inf, a constant that is
    infinite in a half dtype)."""
    counts = []
    for name, expected in case.expected.items():
        broken = ~torch.isfinite(actual[name].double()) & torch.isfinite(expected)
        if bool(broken.any()):
            counts.append(f"{int(broken.sum())} of {int(torch.isfinite(expected).sum())} `{name}` values")
    if not counts:
        return None
    return _half_overflow(case, counts, ctx) or Diagnosis(
        "nan-outputs", f"{' and '.join(counts)} that have a finite answer are NaN or infinite: an infinity met "
        "a 0 or another infinity (0·inf, inf − inf), e.g. a -inf bias multiplied by the mask",
        "Print torch.isnan(t).any() after each step to find the first NaN. Hide keys with "
        "scores.masked_fill(~mask, float('-inf')) or torch.where(mask, scores, -inf), never by multiplying "
        "-inf by the mask (0·-inf is NaN); a row whose every score is -inf is NaN after the softmax too.",
        lesson("masking-before-softmax"))


def _half_overflow(case: Case, counts: list[str], ctx: CheckContext) -> Diagnosis | None:
    """picoGPT's (1 − mask) · −1e10, right in float32, in float16: −1e10 is −inf there, and the
    allowed keys' 0 · (−inf) is NaN."""
    dtype = case.variant.get("dtype")
    if dtype not in (torch.float16, torch.bfloat16):
        return None
    found = constant_beyond(Path(ctx.session.path), torch.finfo(dtype).max)
    if found is None:
        return None
    constant, line = found
    return Diagnosis(
        "fill-overflow", f"{' and '.join(counts)} that have a finite answer are NaN or infinite in {_name(dtype)}: "
        f"the constant `{constant}` (line {line}) is beyond {_name(dtype)}'s largest value "
        f"(≈ {torch.finfo(dtype).max:.5g}), so it is an infinity there, and 0·inf or inf − inf is NaN",
        "Use float('-inf') with masked_fill or torch.where, or torch.finfo(tensor.dtype).min of the tensor you fill: "
        "a constant that fits float32 (-1e9, -1e10) overflows a half dtype.", lesson("masking-additive-constants"))


def _precision(case: Case, actual: dict[str, Tensor]) -> Diagnosis | None:
    traced = set()
    for name in case.expected:
        got, want = _defined(case, name, actual[name])
        if bool(close_elements(got, want, case.tolerance[name]).all()):
            continue
        dtype = precision_explaining(got, want, case.tolerance[name])
        if dtype is None:
            return None
        traced.add(dtype)
    if not traced:
        return None
    coarsest = _name(max(traced, key=lambda d: torch.finfo(d).eps))
    inputs = _name(case.variant.get("dtype", torch.float32))
    return Diagnosis(
        "low-precision", f"your result carries {coarsest}-sized errors on {inputs} inputs: something runs in "
        f"{coarsest}, or a small slip leaves out a little of the sum",
        f"Look for a cast to {coarsest} (.half(), .bfloat16(), autocast, a dtype= argument) and compute in the "
        "input's dtype, or in float32 for half inputs. With no such cast, look for a key, block or term left "
        "out: its effect is as small as rounding.", lesson("numerics-fp32-softmax"))


def _name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


RERUNS_FOR_RANDOMNESS = 4


def _dropout(ctx: CheckContext, problem: Problem, case: Case, actual: dict[str, Tensor],
             options: dict[str, Any] | None) -> Diagnosis | None:
    keep_scale = _dropout_scale(case, actual)
    if keep_scale is None:
        # On a small case dropout may drop nothing in one call, or in two (0.9^k for p = 0.1 and k
        # weights): a few calls tell it from a deterministic slip, which never changes its values.
        for salt in range(1, RERUNS_FOR_RANDOMNESS + 1):
            try:
                again = problem.run(ctx.reseeded(salt), case, options)
            except Exception:  # noqa: BLE001 - a call that fails shows no randomness
                return None
            if not same_values(actual, again):
                return nondeterminism()
        return None
    return nondeterminism(f"the weights are the expected ones times 0 or {keep_scale:.4g}, which is 1/(1−p) for "
                          f"p = {1 - 1 / keep_scale:.2g}: dropout is on")


def nondeterminism(title: str = "two calls with the same inputs return different outputs: dropout (or other "
                                "randomness) is on") -> Diagnosis:
    return Diagnosis("dropout-active", title,
                      "Grading runs at inference: F.dropout(x, p) defaults to training=True, so pass "
                      "training=self.training (or use nn.Dropout, which .eval() turns off).",
                      lesson("sdpa-f-dropout-training"))


def _dropout_scale(case: Case, actual: dict[str, Tensor]) -> float | None:
    """1/(1-p) when every weight is 0 or one constant multiple (> 1) of the expected one."""
    if "weights" not in actual:
        return None
    got, want = _defined(case, "weights", actual["weights"])
    visible = want > 1e-3
    if int(visible.sum()) < 4:
        return None
    ratio = got[visible] / want[visible]
    dropped = ratio.abs() < 1e-3
    kept = ratio[~dropped]
    if not bool(dropped.any()) or kept.numel() == 0:
        return None
    scale = float(kept.median())
    if scale <= 1.0 or not bool(((kept - scale).abs() <= 1e-2 * scale).all()):
        return None
    return scale


def _masked_keys(case: Case, actual: dict[str, Tensor]) -> Diagnosis | None:
    region = case.regions.get("weights", {}).get(MASKED_REGION)
    if region is None or "weights" not in actual:
        return None
    weights = actual["weights"].double()
    hidden = region.expand_as(weights) & ~torch.isnan(case.expected["weights"])
    leaked = (weights.abs() > case.tolerance["weights"].atol) & hidden
    if not bool(leaked.any()):
        return None
    return Diagnosis("masked-keys-leak", f"{int(leaked.sum())} masked-out (query, key) pairs get non-zero weight: "
                      "the mask does not reach every score it should",
                      "Apply the mask to the scores of every batch element and head before the softmax; print "
                      "its shape and check that it broadcasts to (..., n, m) as the contract says.",
                      lesson("masking-before-softmax"))


def _unnormalised(case: Case, actual: dict[str, Tensor]) -> Diagnosis | None:
    if "weights" not in actual:
        return None
    rows = actual["weights"].double().sum(dim=-1)
    defined = ~torch.isnan(case.expected["weights"]).any(dim=-1)
    # Rounding in a coarse dtype moves row sums by ~1e-3; a misplaced scale or mask moves them by far more.
    slack = max(case.tolerance["weights"].atol * case.expected["weights"].shape[-1], 2e-2)
    off = (rows - 1.0).abs() > slack
    off &= defined
    if not bool(off.any()):
        return None
    typical = float(rows[off].median())
    return Diagnosis("weights-not-normalised", f"rows of the attention weights sum to {typical:.4g}, not 1: "
                      "something scales, masks or renormalises after the softmax",
                      "Scale and mask the scores, then take the softmax last: its rows sum to 1.",
                      lesson("softmax-axis"))


def _partial(case: Case, actual: dict[str, Tensor]) -> Diagnosis | None:
    """Differences confined to some heads or queries, in every output that has that axis: a name
    the other outputs contradict (their every row differs) is not given."""
    for axis_name, diagnosis_id, hint in (
            ("head", "some-heads-wrong", "Check what differs between heads: the slice of features each head "
                                         "gets ([h·d, (h+1)·d)), a loop bound, or a reshape."),
            ("query", "some-rows-wrong", "Check what is special about those positions: how the mask lines up "
                                         "with them, or an off-by-one in a slice.")):
        wrong: set[int] = set()
        defined: set[int] = set()  # a row with no defined answer (every key masked) is neither right nor wrong
        size = 0
        for name, expected in case.expected.items():
            dims = case.dims.get(name, ())
            bad = ~close_elements(actual[name], expected, case.tolerance[name])
            if axis_name not in dims or bad.dim() != len(dims):
                continue
            size = bad.shape[dims.index(axis_name)]
            wrong.update(indices_along(bad, dims.index(axis_name)))
            defined.update(indices_along(~torch.isnan(expected), dims.index(axis_name)))
        if 0 < len(wrong) < len(defined):
            return Diagnosis(diagnosis_id, f"only {plural(axis_name)} {index_ranges(sorted(wrong))} of "
                              f"0–{size - 1} differ: the others are right", hint,
                              lesson("multihead-split-transpose" if axis_name == "head" else "masking-before-softmax"))
    return None
