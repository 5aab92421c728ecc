"""Checks for exercises/online_softmax.py: the streaming softmax normaliser and its merge.

    online_update(row_max, row_sum, chunk) -> (row_max, row_sum)
    merge_states(max_a, sum_a, max_b, sum_b) -> (row_max, row_sum)
    online_softmax(x, chunk_size) -> softmax(x, dim=-1)

A state is (m, ℓ) per row with ℓ = Σ exp(x − m) over the logits seen; the empty state is
(−inf, 0). Expected states are computed in float64 from the very inputs the learner received,
so a state passed in already rounded is not held against it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch
from torch import Tensor

from quizprep.grader import reference
from quizprep.grader.compare import UNIT_ROUNDOFF, WORKING_PRECISION, Tolerance
from quizprep.grader.context import CheckContext
from quizprep.grader.lessons import lesson
from quizprep.grader.problem import (
    Case, FunctionProblem, Hypothesis, dtype_not_kept, either, first_output_checks, verify,
)
from quizprep.grader.spec import Check, CheckFailure, ExerciseSpec

F32, F64 = torch.float32, torch.float64
NEG_INF = float("-inf")
TARGETS = {"update": "online_update", "merge": "merge_states", "softmax": "online_softmax"}
OUTPUTS = {"update": ("max", "sum"), "merge": ("max", "sum"), "softmax": ("out",)}


def state_of(x: Tensor) -> tuple[Tensor, Tensor]:
    """(max, Σ exp(x − max)) per row in float64; (−inf, 0) for a row with nothing visible."""
    x = x.double()
    row_max = x.amax(dim=-1) if x.shape[-1] else torch.full(x.shape[:-1], NEG_INF, dtype=F64)
    finite = row_max.masked_fill(torch.isneginf(row_max), 0.0)
    return row_max, (x - finite.unsqueeze(-1)).exp().sum(dim=-1)


def merged(max_a: Tensor, sum_a: Tensor, max_b: Tensor, sum_b: Tensor) -> tuple[Tensor, Tensor]:
    max_a, sum_a, max_b, sum_b = (t.double() for t in (max_a, sum_a, max_b, sum_b))
    row_max = torch.maximum(max_a, max_b)
    finite = row_max.masked_fill(torch.isneginf(row_max), 0.0)
    return row_max, sum_a * (max_a - finite).exp() + sum_b * (max_b - finite).exp()


def _logits(rows: int, width: int, variant: dict[str, Any], generator: torch.Generator) -> Tensor:
    x = torch.randn(rows, width, generator=generator, dtype=F64) * variant.get("spread", 2.0)
    offset = variant.get("offset", 0.0)
    if offset:  # rows far from zero, half of them negative: overflow and underflow both bite
        x = x + offset * torch.where(torch.rand(rows, 1, generator=generator) < 0.5, -1.0, 1.0)
    return x


def _hide(x: Tensor, chunk: int, generator: torch.Generator) -> Tensor:
    """Scattered −inf entries, row 0's first chunk and row 1's second chunk wholly −inf; every
    row keeps a visible logit."""
    x = x.masked_fill(torch.rand(x.shape, generator=generator) < 0.3, NEG_INF)
    x[0, :chunk] = NEG_INF
    if x.shape[0] > 1 and x.shape[1] > 2 * chunk:
        x[1, chunk:2 * chunk] = NEG_INF
    x[:, -1] = torch.randn(x.shape[0], generator=generator, dtype=F64)
    return x


def build(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    generator = torch.Generator().manual_seed(seed)
    op, dtype = variant["op"], variant.get("dtype", F64)
    rows, width, chunk = sizes["rows"], sizes["width"], sizes["chunk"]
    x = _logits(rows, width + (chunk if op != "softmax" else 0), variant, generator)
    if variant.get("masked"):
        x = _hide(x, chunk, generator)
    if variant.get("empty"):
        x[0, width:] = NEG_INF  # row 0's first chunk shows nothing
    x = x.to(dtype)
    label = f"{rows} rows, {str(dtype).removeprefix('torch.')}"
    if op == "softmax":
        data = {"x": x, "chunk": chunk}
        expected = {"out": reference.softmax(x)}
        label = f"x {tuple(x.shape)}, chunk_size={chunk}, " + label
    else:
        prefix, rest = x[:, :width], x[:, width:]
        if op == "update":
            state = state_of(prefix) if not variant.get("empty") else state_of(prefix[:, :0])
            start = (state[0].to(dtype), state[1].to(dtype))
            data = {"state": start, "chunk": rest}
            expected = dict(zip(("max", "sum"), merged(*start, *state_of(rest))))
            label = (f"state of {0 if variant.get('empty') else width} logits, then a chunk of {chunk}, " + label)
        else:
            states = [(row_max.to(dtype), total.to(dtype)) for row_max, total in map(state_of, (prefix, rest))]
            data = {"a": states[0], "b": states[1]}
            expected = dict(zip(("max", "sum"), merged(*states[0], *states[1])))
            label = f"states of {width} and {chunk} logits, " + label
    finite = x.double()[torch.isfinite(x.double())]
    magnitude = float(finite.abs().max()) if finite.numel() else 0.0
    working = UNIT_ROUNDOFF[WORKING_PRECISION[dtype] if dtype != F64 else F64]
    tolerance = {"out": Tolerance(8 * UNIT_ROUNDOFF[dtype] + 4 * working * magnitude),
                 "max": Tolerance(4 * UNIT_ROUNDOFF[dtype] * max(1.0, magnitude))}
    if "sum" in expected:
        scale = float(expected["sum"].max())
        tolerance["sum"] = Tolerance((8 * UNIT_ROUNDOFF[dtype] + 4 * working * magnitude) * max(1.0, scale))
    return Case(label=label, sizes=dict(sizes), variant=dict(variant), data=data, expected=expected,
                tolerance={name: tolerance[name] for name in expected},
                dims={name: ("row",) if name != "out" else ("row", "col") for name in expected})


def run(ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
    op, data = case.variant["op"], case.data
    if op == "softmax":
        args: tuple[Any, ...] = (data["x"], data["chunk"])
    elif op == "update":
        args = (*data["state"], data["chunk"])
    else:
        args = (*data["a"], *data["b"])
    reply = ctx.call(TARGETS[op], *args, options=options)
    outputs = first_output_checks(reply.value, OUTPUTS[op], TARGETS[op])
    return outputs if op == "softmax" else _meaning(outputs)


def _meaning(state: dict[str, Tensor]) -> dict[str, Tensor]:
    """A state compared by what it means: with its max at −inf, a finite sum is wiped by the
    exp(−inf − m) = 0 of the next finite logit, so (−inf, c) is the empty state whatever c
    (Inductor's online_softmax_reduce leaves (−inf, chunk length)). NaN and inf sums survive that
    product as NaN, so they stay as they are."""
    row_max, row_sum = state["max"], state["sum"]
    if row_max.shape != row_sum.shape or not (row_max.is_floating_point() and row_sum.is_floating_point()):
        return state
    return {"max": row_max, "sum": row_sum.masked_fill(torch.isneginf(row_max) & torch.isfinite(row_sum), 0.0)}


def shrink(sizes: dict[str, int]) -> list[dict[str, int]]:
    return [{**sizes, key: size - 1} for key, size in sizes.items() if size > 2]


def stream(x: Tensor, chunk: int, *, rescale: str = "right", guard: bool = True,
           skip_empty_start: bool = False) -> Tensor:
    """The learner's loop with one slip: softmax of x from a chunk-by-chunk state, in float64."""
    x = x.double()
    row_max = torch.full(x.shape[:-1], NEG_INF, dtype=F64)
    row_sum = torch.zeros_like(row_max)
    for start in range(0, x.shape[-1], chunk):
        part = x[..., start:start + chunk]
        new_max = torch.maximum(row_max, part.amax(dim=-1))
        base = new_max.masked_fill(torch.isneginf(new_max), 0.0) if guard else new_max
        factor = {"right": (row_max - base).exp(), "none": torch.ones_like(row_max),
                  "inverted": (base - row_max).exp()}[rescale]
        if skip_empty_start:  # a loop that starts from the first chunk's own state
            factor = torch.where(torch.isneginf(row_max), torch.zeros_like(factor), factor)
        row_sum = row_sum * factor + (part - base.unsqueeze(-1)).exp().sum(dim=-1)
        row_max = new_max
    return (x - row_max.unsqueeze(-1)).exp() / row_sum.unsqueeze(-1)


def _update(rescale: str):
    def predict(case: Case) -> dict[str, Tensor] | None:
        op, data = case.variant["op"], case.data
        if op == "softmax":
            return {"out": stream(data["x"], data["chunk"], rescale=rescale, skip_empty_start=True)}
        if op != "update":
            return None
        old_max, old_sum = (t.double() for t in data["state"])
        chunk_max, chunk_sum = state_of(data["chunk"])
        new_max = torch.maximum(old_max, chunk_max)
        factor = torch.ones_like(old_max) if rescale == "none" else (new_max - old_max).exp()
        return {"max": new_max, "sum": old_sum * factor + chunk_sum * (chunk_max - new_max).exp()}

    return predict


def _two_states(case: Case) -> tuple[tuple[Tensor, Tensor], tuple[Tensor, Tensor]] | None:
    """The two states a merge combines: the merge's own, or an update's old state and its chunk's."""
    op, data = case.variant["op"], case.data
    if op == "merge":
        max_a, sum_a = (t.double() for t in data["a"])
        max_b, sum_b = (t.double() for t in data["b"])
        return (max_a, sum_a), (max_b, sum_b)
    if op == "update":
        old_max, old_sum = (t.double() for t in data["state"])
        return (old_max, old_sum), state_of(data["chunk"])
    return None


def _merge_slip(kind: str):
    """A merge slip, in the merge and in an update that merges the chunk's own state into the old."""
    def predict(case: Case) -> dict[str, Tensor] | None:
        states = _two_states(case)
        if states is None:
            return None
        (max_a, sum_a), (max_b, sum_b) = states
        if kind == "added":
            return {"max": torch.maximum(max_a, max_b), "sum": sum_a + sum_b}
        if kind == "inverted":  # each sum scaled by exp(m − m_own) ≥ 1; an empty side (−inf) adds nothing
            row_max = torch.maximum(max_a, max_b)
            sums = [(total * (row_max - own).exp()).masked_fill(torch.isneginf(own), 0.0)
                    for own, total in ((max_a, sum_a), (max_b, sum_b))]
            return {"max": row_max, "sum": sums[0] + sums[1]}
        return {"max": max_a, "sum": sum_a + sum_b * (max_b - max_a).exp()}

    return predict


def _smaller_max(case: Case) -> dict[str, Tensor] | None:
    """The merge's comparison flipped: both sums brought to the smaller maximum (exp of a positive
    gap for the other), in the merge and in an update that merges the chunk's own state; from the
    empty state the maximum stays −inf."""
    states = _two_states(case)
    if states is None:
        return None
    (max_a, sum_a), (max_b, sum_b) = states
    low = torch.minimum(max_a, max_b)
    finite = low.masked_fill(torch.isneginf(low), 0.0)
    total = sum_a * (max_a - finite).exp() + sum_b * (max_b - finite).exp()
    # Kept at −inf (one side empty), the state means "nothing seen", whatever its sum (see _meaning).
    return {"max": low, "sum": total.masked_fill(torch.isneginf(low), 0.0)}


def _unguarded(case: Case) -> dict[str, Tensor] | None:
    op, data = case.variant["op"], case.data
    if op == "softmax":
        return {"out": stream(data["x"], data["chunk"], guard=False)}
    if op == "update":
        old_max, old_sum = (t.double() for t in data["state"])
        new_max = torch.maximum(old_max, data["chunk"].double().amax(dim=-1))
        return {"max": new_max, "sum": old_sum * (old_max - new_max).exp()
                + (data["chunk"].double() - new_max.unsqueeze(-1)).exp().sum(dim=-1)}
    return None


def _no_shift(case: Case) -> dict[str, Tensor] | None:
    if case.variant["op"] != "softmax":
        return None
    x = case.data["x"]
    exps = x.to(F32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype).exp()
    return {"out": (exps / exps.sum(dim=-1, keepdim=True)).double()}


HYPOTHESES = (
    Hypothesis("online-no-rescale", "the running sum is not rescaled when the maximum grows",
               "ℓ_new = ℓ·exp(m_old − m_new) + Σ exp(x − m_new): the old terms were measured against m_old.",
               lesson("flash-online-softmax-bug"), _update("none")),
    Hypothesis("online-rescale-inverted", "the running sum is rescaled by exp(m_new − m_old): the wrong sign",
               "When the maximum grows the old terms shrink: the factor is exp(m_old − m_new) ≤ 1.",
               lesson("softmax-online-rescale"), either(_update("inverted"), _merge_slip("inverted"))),
    Hypothesis("merge-no-rescale", "the two sums are added without bringing them to the common maximum",
               "ℓ = ℓ_a·exp(m_a − m) + ℓ_b·exp(m_b − m) with m = max(m_a, m_b).", lesson("serving-merge-partials"),
               _merge_slip("added")),
    Hypothesis("merge-first-max", "the merge assumes the first state holds the larger maximum",
               "Take m = max(m_a, m_b) and rescale both sums to it: either half may hold the maximum.",
               lesson("serving-merge-partials"), _merge_slip("first max")),
    Hypothesis("merge-min", "the comparison that picks the merged maximum is flipped: the state keeps the "
               "smaller maximum, so the other sum is scaled by exp of a positive gap and overflows for large ones",
               "m = max(m_a, m_b) (torch.maximum, or where(m_a > m_b, m_a, m_b)); each sum is then scaled by "
               "exp(m_own − m) ≤ 1.", lesson("serving-merge-partials"), _smaller_max),
    Hypothesis("online-nan-masked-chunk", "a chunk whose logits are all −inf, seen before any finite logit, "
               "gives exp(−inf − (−inf)) = NaN", "While the running maximum is still −inf, use 0 in its place "
               "for the shift (or skip the rescale): exp(−inf − 0) = 0 is what the empty state needs.",
               lesson("masking-before-softmax"), _unguarded, nonfinite_must_match=True),
    Hypothesis("no-max-shift", "exp of the logits without the max shift: they overflow to inf and NaN",
               "Keep the running maximum and subtract it before exp.", lesson("softmax-max-shift"), _no_shift,
               nonfinite_must_match=True),
)


PROBLEM = FunctionProblem(HYPOTHESES, build, run, shrink)


def check_update(ctx: CheckContext) -> str:
    for i, (width, chunk) in enumerate(((9, 4), (1, 7), (16, 1), (5, 12))):
        verify(ctx, PROBLEM, {"rows": 8, "width": width, "chunk": chunk}, {"op": "update"}, ctx.seed + i)
    return "a chunk folded into states of 1 to 16 logits, float64"


def check_update_empty(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, {"rows": 6, "width": 5, "chunk": 4}, {"op": "update", "empty": True, "masked": True},
           ctx.seed + 10)
    return "from the empty state (−inf, 0), one chunk all −inf"


def check_merge(ctx: CheckContext) -> str:
    for i, (width, chunk) in enumerate(((7, 7), (3, 11), (13, 2))):
        verify(ctx, PROBLEM, {"rows": 8, "width": width, "chunk": chunk}, {"op": "merge"}, ctx.seed + 20 + i)
    return "two partial states of random splits, float64"


def _verify_softmax(ctx: CheckContext, sizes: dict[str, int], variant: dict[str, Any],
                    seed: int) -> tuple[Case, dict[str, Tensor]]:
    """verify() for online_softmax; a failure that the learner's own online_update explains (their
    loop folds the chunks with it, and that update fails its own check) takes the update's name,
    so one bug gets one name, not its symptoms downstream."""
    try:
        return verify(ctx, PROBLEM, sizes, variant, seed)
    except CheckFailure as failure:
        cause = _cause_upstream(ctx, build(sizes, variant, seed))
        if cause is None:
            raise
        raise replace(failure, named=cause, diagnosis="", hint="", quiz="", diagnosis_id="") from None


def _cause_upstream(ctx: CheckContext, case: Case) -> Hypothesis | None:
    """The name the learner's online_update (or the merge it may use) earns in its own checks,
    when replaying that update chunk by chunk and finishing with exp(x − m) / ℓ gives the
    learner's online_softmax output."""
    try:
        follows = _replays_update(ctx, case)
    except Exception:  # noqa: BLE001 - an update that cannot be replayed explains nothing
        return None
    if not follows:
        return None
    for upstream in (check_update, check_update_empty, check_merge):
        try:
            upstream(ctx)
        except CheckFailure as failure:
            if isinstance(failure.named, Hypothesis):
                return failure.named
        except Exception:  # noqa: BLE001 - an upstream check that crashes names nothing here
            continue
    return None


def _replays_update(ctx: CheckContext, case: Case) -> bool:
    x, chunk = case.data["x"], case.data["chunk"]
    actual = run(ctx, case)["out"].double().cpu()
    state = (torch.full(x.shape[:-1], NEG_INF, dtype=x.dtype), torch.zeros(x.shape[:-1], dtype=x.dtype))
    for start in range(0, x.shape[-1], chunk):
        reply = ctx.call(TARGETS["update"], *state, x[..., start:start + chunk])
        found = first_output_checks(reply.value, OUTPUTS["update"], TARGETS["update"])
        state = (found["max"], found["sum"])
    row_max, row_sum = (part.double().cpu() for part in state)
    if row_max.shape != x.shape[:-1] or row_sum.shape != x.shape[:-1] or actual.shape != x.shape:
        return False
    replayed = (x.double() - row_max.unsqueeze(-1)).exp() / row_sum.unsqueeze(-1)
    same = torch.isclose(actual, replayed, rtol=1e-3, atol=1e-6, equal_nan=True) | \
        (~torch.isfinite(actual) & ~torch.isfinite(replayed))
    return bool(same.all())


def check_softmax_splits(ctx: CheckContext) -> str:
    generator = ctx.generator(30)
    chunks = [1, 29, 40] + [int(c) for c in torch.randint(2, 17, (4,), generator=generator)]
    for i, chunk in enumerate(chunks):
        _verify_softmax(ctx, {"rows": 6, "width": 29, "chunk": chunk}, {"op": "softmax", "spread": 3.0},
                        ctx.seed + 30 + i)
    return f"29 logits in chunks of {', '.join(map(str, chunks))}, against torch.softmax in float64"


def check_stability(ctx: CheckContext) -> str:
    _verify_softmax(ctx, {"rows": 6, "width": 24, "chunk": 5},
           {"op": "softmax", "dtype": F32, "offset": 1e4, "spread": 3.0}, ctx.seed + 40)
    return "rows around +1e4 and −1e4, float32"


def check_masked(ctx: CheckContext) -> str:
    _verify_softmax(ctx, {"rows": 5, "width": 23, "chunk": 4}, {"op": "softmax", "dtype": F32, "masked": True},
           ctx.seed + 50)
    return "−inf logits, whole chunks of them (first and in the middle)"


def check_dtypes(ctx: CheckContext) -> str:
    for i, dtype in enumerate((F32, torch.bfloat16, torch.float16)):
        case, actual = _verify_softmax(ctx, {"rows": 4, "width": 13, "chunk": 5}, {"op": "softmax", "dtype": dtype},
                              ctx.seed + 60 + i)
        if actual["out"].dtype != dtype:
            raise CheckFailure(f"returns {str(actual['out'].dtype).removeprefix('torch.')} for "
                               f"{str(dtype).removeprefix('torch.')} input", tried=case.label,
                               hint="Return the input's dtype (compute in float32 if you like, then cast back).",
                               named=dtype_not_kept(actual["out"].dtype, dtype))
    return "fp32, bf16, fp16"


# The real-world use each check stands for.
USAGE = {
    "update": "FlashAttention's inner loop folding a key block into the row statistics",
    "update-empty": "the first block of a causal or padded row: all logits masked, the state stays (−inf, 0)",
    "merge": "Flash-Decoding's split-KV combine and ring attention: two partial states merged",
    "softmax-splits": "any tiling: the result must not depend on the chunk size",
    "stability": "logits of ±1e4 in float32",
    "masked": "masked logits, whole chunks of them, as causal and padding masks produce",
    "dtypes": "half-precision inputs, returned in their dtype",
}

SPEC = ExerciseSpec(
    name="online-softmax",
    title="Online softmax: the streaming normaliser and the merge of two states",
    entry_points=tuple(TARGETS.values()),
    lessons=("flash-online-softmax-bug", "softmax-online-rescale", "serving-merge-partials", "masking-before-softmax",
             "softmax-max-shift"),
    forbidden=("softmax",),
    checks=(
        Check("update", "one chunk folded into a running (max, sum)", check_update),
        Check("update-empty", "the first chunk, from the empty state", check_update_empty),
        Check("merge", "two partial states merged (split-KV combine)", check_merge),
        Check("softmax-splits", "online_softmax over random chunk sizes", check_softmax_splits),
        Check("stability", "logits of ±1e4 in float32", check_stability),
        Check("masked", "−inf logits and all −inf chunks", check_masked),
        Check("dtypes", "dtypes: output matches the input", check_dtypes),
    ),
)
