"""Checks for exercises/softmax.py: stable_softmax(x, dim=-1)."""
from __future__ import annotations

from functools import partial
from typing import Any

import torch
from torch import Tensor

from quizprep.grader import reference
from quizprep.grader.compare import UNIT_ROUNDOFF, Tolerance, find_mismatch
from quizprep.grader.context import CheckContext
from quizprep.grader.lessons import lesson
from quizprep.grader.problem import (
    either, Case, FunctionProblem, Hypothesis, dtype_not_kept, expect_unchanged, first_output_checks, reject_shortcuts, verify,
)
from quizprep.grader.spec import Check, CheckFailure, ExerciseSpec

TARGET = "stable_softmax"
SHAPE_KEYS = ("d0", "d1", "d2")


def _shape(sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(sizes[key] for key in SHAPE_KEYS if key in sizes)


def build(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    generator = torch.Generator().manual_seed(seed)
    dtype, dim = variant.get("dtype", torch.float32), variant.get("dim", -1)
    shape = _shape(sizes)
    x = torch.randn(shape, generator=generator, dtype=torch.float64) * variant.get("spread", 2.0)
    offset = variant.get("offset", 0.0)
    if offset:  # rows far from zero, half of them negative: overflow and underflow both bite
        signs = torch.where(torch.rand(shape[:-1] + (1,), generator=generator) < 0.5, -1.0, 1.0)
        x = x + offset * signs
    x = x.to(dtype)
    expected = reference.softmax(x, dim)
    case = Case(
        label=f"x {tuple(shape)} {str(dtype).removeprefix('torch.')}, dim={dim}, values around ±{offset:g}"
        if offset else f"x {tuple(shape)} {str(dtype).removeprefix('torch.')}, dim={dim}",
        sizes=dict(sizes), variant=dict(variant), data={"x": x, "dim": dim},
        expected={"out": expected},
        tolerance={"out": softmax_tolerance(x)},
        dims={"out": tuple(f"axis{i}" for i in range(len(shape)))},
    )
    if shape[dim] > 1:
        uniform = torch.full(shape, 1.0 / shape[dim], dtype=torch.float64)
        reject_shortcuts(case, "out", {"zeros": torch.zeros(shape, dtype=torch.float64), "uniform": uniform})
    return case


def softmax_tolerance(x: Tensor) -> Tolerance:
    """8 units of roundoff, plus what subtracting a per-row constant c of size max|x| costs (u·|c|),
    at float32 precision for half inputs (they are normally upcast) and the input's otherwise."""
    working = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    magnitude = float(x.double().abs().max()) if x.numel() else 0.0
    return Tolerance(8 * UNIT_ROUNDOFF[x.dtype] + 4 * UNIT_ROUNDOFF[working] * magnitude)


def run(ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
    dim = case.data["dim"]
    kwargs = {} if dim == -1 and not case.variant.get("explicit_dim") else {"dim": dim}
    reply = ctx.call(TARGET, case.data["x"], options=options, **kwargs)
    return first_output_checks(reply.value, ("out",), TARGET)


def shrink(sizes: dict[str, int]) -> list[dict[str, int]]:
    return [{**sizes, key: size - 1} for key, size in sizes.items() if size > 2]


def _in_dtype(fn):
    def predict(case: Case) -> dict[str, Tensor] | None:
        x, dim = case.data["x"], case.data["dim"]
        return {"out": fn(x, dim).double()}

    return predict


def _naive(x: Tensor, dim: int) -> Tensor:
    e = x.exp()
    return e / e.sum(dim=dim, keepdim=True)


def _log_softmax_unshifted(x: Tensor, dim: int, lse_dtype: torch.dtype | None = None) -> Tensor:
    """exp(log_softmax(x)) with log_softmax = x − log Σ exp x and no shift (burn before PR #346): a row
    whose exp overflows gets log Σ = inf, so zeros, not NaN; `lse_dtype`: the sum taken in float32
    for half inputs, then rounded back."""
    lse = x.to(lse_dtype or x.dtype).exp().sum(dim=dim, keepdim=True).log().to(x.dtype)
    return (x - lse).exp()


def _shift_by(amount: Tensor, x: Tensor, dim: int) -> Tensor:
    e = (x - amount).exp()
    return e / e.sum(dim=dim, keepdim=True)


def _log_sum_exp_added_back(x: Tensor, dim: int) -> Tensor:
    """exp(x - lse) with lse = max + log Σ exp(x - max) formed in x's dtype: the small log term is
    added to the large max, and in a half dtype it rounds away."""
    c = x.amax(dim=dim, keepdim=True)
    return (x - (c + (x - c).exp().sum(dim=dim, keepdim=True).log())).exp()


HYPOTHESES = (
    Hypothesis("no-max-shift", "exp without subtracting the maximum: large logits overflow to inf (then NaN)",
               "Subtract x.amax(dim, keepdim=True) first; softmax(x - c) = softmax(x) for any constant c per row.",
               lesson("softmax-max-shift"), either(_in_dtype(_naive), _in_dtype(_log_softmax_unshifted),
                                                   _in_dtype(partial(_log_softmax_unshifted, lse_dtype=torch.float32))),
               nonfinite_must_match=True),
    Hypothesis("global-max", "shifted by the maximum of the whole tensor, not of each row: rows far below it "
               "underflow to 0/0", "Take the max along `dim` with keepdim=True.", lesson("softmax-max-shift"),
               _in_dtype(lambda x, dim: _shift_by(x.amax(), x, dim)), nonfinite_must_match=True),
    Hypothesis("max-over-last-axis", "shifted by the maximum over the last axis, but summed over `dim`: that shift "
               "varies along `dim`, so it does not cancel", "Take the max along the same axis as the sum: "
               "x.amax(dim=dim, keepdim=True).", lesson("softmax-axis"),
               lambda case: _in_dtype(lambda x, dim: _shift_by(x.amax(dim=-1, keepdim=True), x, dim))(case)
               if case.data["dim"] not in (-1, case.data["x"].dim() - 1) else None, nonfinite_must_match=True),
    Hypothesis("dim-ignored", "the `dim` argument is ignored: always normalised over the last axis",
               "Use `dim` everywhere: amax(dim=dim, keepdim=True) and sum(dim=dim, keepdim=True).",
               lesson("softmax-axis"), lambda case: {"out": reference.softmax(case.data["x"], -1)}
               if case.data["dim"] not in (-1, case.data["x"].dim() - 1) else None),
    Hypothesis("softmax-all-axes", "normalised over every element of the tensor, not along `dim`: SciPy's "
               "softmax with its default axis=None", "Reduce along `dim` only; scipy.special.softmax normalises "
               "over all elements when axis is None.", lesson("softmax-axis"),
               lambda case: {"out": reference.softmax(case.data["x"].reshape(-1), -1).reshape(case.data["x"].shape)}
               if case.data["x"].dim() > 1 else None),
    Hypothesis("lse-rounded-away", "exp(x − lse) with lse = max + log Σ exp(x − max) formed in the input's dtype: "
               "next to a max of thousands the log term (a few units) rounds away in float16, so rows sum to more "
               "than 1", "Subtract in order, small terms last: exp(x − max − log Σ), or divide by Σ as softmax "
               "does; or form the log-sum-exp in float32 for half inputs.", lesson("numerics-fp32-softmax"),
               _in_dtype(_log_sum_exp_added_back)),
    Hypothesis("no-keepdim", "the max or sum is taken without keepdim=True and broadcasts along the wrong axis",
               "Keep the reduced axis (keepdim=True) so it lines up with x.", lesson("softmax-axis"),
               either(lambda case: _no_keepdim(case), lambda case: _no_keepdim(case, on_sum=False))),
)


def _no_keepdim(case: Case, on_sum: bool = True) -> dict[str, Tensor] | None:
    """The max taken without keepdim (and the sum too, unless `on_sum` is False)."""
    x, dim = case.data["x"].double(), case.data["dim"]
    try:
        e = (x - x.amax(dim=dim)).exp()
        return {"out": e / e.sum(dim=dim, keepdim=not on_sum)}
    except RuntimeError:
        return None


PROBLEM = FunctionProblem(HYPOTHESES, build, run, shrink)


def check_values(ctx: CheckContext) -> str:
    for i, (shape, dim) in enumerate((((4, 4), -1), ((5, 7), -1), ((6,), 0), ((3, 4, 5), 1), ((4, 4), 0), ((2, 3, 6), -1))):
        sizes = dict(zip(SHAPE_KEYS, shape))
        verify(ctx, PROBLEM, sizes, {"dtype": torch.float64, "dim": dim, "explicit_dim": True}, ctx.seed + i)
    return "1-D to 3-D, dim = -1, 0, 1"


def check_default_dim(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, {"d0": 4, "d1": 6}, {"dtype": torch.float32}, ctx.seed + 10)
    return "dim defaults to -1"


def check_large_logits(dtype: torch.dtype):
    def run_check(ctx: CheckContext) -> str:
        case, actual = verify(ctx, PROBLEM, {"d0": 6, "d1": 8}, {"dtype": dtype, "offset": 1e4, "spread": 3.0},
                              ctx.seed + 20)
        _expect_dtype(actual["out"], dtype, case.label)
        return "rows around +1e4 and -1e4"

    return run_check


def check_dtypes(ctx: CheckContext) -> str:
    for i, dtype in enumerate((torch.float64, torch.float32, torch.bfloat16, torch.float16)):
        case, actual = verify(ctx, PROBLEM, {"d0": 3, "d1": 5}, {"dtype": dtype}, ctx.seed + 30 + i)
        _expect_dtype(actual["out"], dtype, case.label)
    return "fp64, fp32, bf16, fp16"


def _expect_dtype(out: Tensor, dtype: torch.dtype, label: str) -> None:
    if out.dtype != dtype:
        raise CheckFailure(f"returns {str(out.dtype).removeprefix('torch.')} for "
                           f"{str(dtype).removeprefix('torch.')} input", tried=label,
                           hint="Return the input's dtype (compute in float32 if you like, then cast back).",
                           named=dtype_not_kept(out.dtype, dtype))


def check_gradients(ctx: CheckContext) -> str:
    case = build({"d0": 3, "d1": 5}, {"dtype": torch.float64}, ctx.seed + 40)
    grad_out = torch.randn(3, 5, generator=ctx.generator(41), dtype=torch.float64)
    reply = ctx.call(TARGET, case.data["x"], options={"requires_grad": True, "grad_output": grad_out})
    first_output_checks(reply.value, ("out",), TARGET)
    got = reply.grads.get("arg0")
    if reply.grad_error or got is None:
        raise CheckFailure(f"no gradient reaches x: {reply.grad_error or 'x does not influence the output'}",
                           tried=case.label, hint="Keep to differentiable torch operations.")
    leaf = case.data["x"].clone().requires_grad_(True)
    (want,) = reference.gradients(reference.softmax(leaf, -1), [leaf], grad_out)
    mismatch = find_mismatch("dout/dx", got, want, Tolerance.for_dtype(torch.float64, factor=64))
    if mismatch:
        raise CheckFailure("the gradient differs from the reference", tried=case.label, mismatches=[mismatch],
                           hint="An in-place op or a detach() breaks the backward pass.")
    return "float64"


def check_not_mutated(ctx: CheckContext) -> None:
    case = build({"d0": 4, "d1": 5}, {"dtype": torch.float32}, ctx.seed + 50)
    reply = ctx.call(TARGET, case.data["x"], options={"return_inputs": True})
    expect_unchanged(reply, (("x", case.data["x"]),), case.label,
                     "`x -= x.max(...)` or `x.exp_()` change the caller's tensor; use x - ... instead.")


# The real-world use each check stands for.
USAGE = {
    "values": "softmax over any axis of a batched tensor",
    "default-dim": "callers that rely on dim=-1 (attention's key axis)",
    "large-fp32": "unnormalised logits of ±1e4 in float32",
    "large-fp16": "the same in float16, where exp overflows above 11",
    "dtypes": "half-precision inputs returned in their dtype",
    "gradients": "training: backward through the softmax",
    "no-mutation": "logits reused by the caller (sampling, logging)",
}

SPEC = ExerciseSpec(
    name="softmax",
    title="Numerically stable softmax",
    entry_points=(TARGET,),
    lessons=("softmax-max-shift", "softmax-axis", "numerics-fp32-softmax"),
    forbidden=("softmax",),
    checks=(
        Check("values", "values against the float64 reference, any dim", check_values),
        Check("default-dim", "dim defaults to the last axis", check_default_dim),
        Check("large-fp32", "logits of ±1e4 in float32", check_large_logits(torch.float32)),
        Check("large-fp16", "logits of ±1e4 in float16", check_large_logits(torch.float16)),
        Check("dtypes", "dtypes: output matches the input", check_dtypes),
        Check("gradients", "gradient with respect to x", check_gradients),
        Check("no-mutation", "the input is not modified", check_not_mutated),
    ),
)
