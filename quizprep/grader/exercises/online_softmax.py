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
from quizprep.grader.op_lines import quoted, unread_in_call, unread_line
from quizprep.grader.problem import (
    Case, FunctionProblem, Hypothesis, dtype_not_kept, failure_for, first_output_checks, mismatches, verify,
)
from quizprep.grader.exercises._online_mistakes import HYPOTHESES, state_of
from quizprep.grader.spec import Check, CheckFailure, Diagnosis, ExerciseSpec

F32, F64 = torch.float32, torch.float64
NEG_INF = float("-inf")
TARGETS = {"update": "online_update", "merge": "merge_states", "softmax": "online_softmax"}
OUTPUTS = {"update": ("max", "sum"), "merge": ("max", "sum"), "softmax": ("out",)}


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
    return outputs if op == "softmax" else _meaning(outputs, args[-1].dtype)


def _meaning(state: dict[str, Tensor], dtype: torch.dtype) -> dict[str, Tensor]:
    """A state compared by what it means: with its max at −inf, a finite sum is wiped by the
    exp(−inf − m) = 0 of the next finite logit, so (−inf, c) is the empty state whatever c
    (Inductor's online_softmax_reduce leaves (−inf, chunk length)). NaN and inf sums survive that
    product as NaN, so they stay as they are. Likewise a zero sum under a max at or below the lowest
    finite logit of the inputs' dtype (finfo.min, the sentinel kernels start from instead of −inf:
    Pallas, Triton) is the empty state: every logit that can come raises the max to itself and
    adds its exp(0) = 1, as from (−inf, 0)."""
    row_max, row_sum = state["max"], state["sum"]
    if row_max.shape != row_sum.shape or not (row_max.is_floating_point() and row_sum.is_floating_point()):
        return state
    sentinel = (row_sum == 0) & (row_max.double() <= torch.finfo(dtype).min)
    return {"max": row_max.masked_fill(sentinel, NEG_INF),
            "sum": row_sum.masked_fill(torch.isneginf(row_max) & torch.isfinite(row_sum), 0.0)}


def shrink(sizes: dict[str, int]) -> list[dict[str, int]]:
    return [{**sizes, key: size - 1} for key, size in sizes.items() if size > 2]


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


WHOLE_ROW = Diagnosis(
    "online-whole-row", "online_softmax reduces whole rows at once (a max, sum or logsumexp over x) instead of "
    "building the state chunk by chunk: right values, but not an online softmax",
    "Loop over x[..., start:start + chunk_size], fold each chunk into (row_max, row_sum) with your online_update, "
    "and only then compute exp(x − row_max) / row_sum.", lesson("softmax-online-rescale"))


def _one_pass_sizes(ctx: CheckContext) -> dict[str, int]:
    """Sizes of this grade's own: a file that chunked only at a fixed size passed (seventh red team)."""
    generator = ctx.generator(70)
    chunk = int(torch.randint(3, 11, (1,), generator=generator))
    return {"rows": 4, "width": int(torch.randint(4 * chunk, 121, (1,), generator=generator)), "chunk": chunk}


def check_one_pass(ctx: CheckContext) -> str:
    """Right values from reductions over whole rows fail here: the grader's audit notes the most values
    any one reduction, scan, pool, transform or product folds, which chunk by chunk is at most chunk_size
    (or the number of chunks, for a learner who merges all chunk states at once), and one more when the
    running state joins the fold; a file that never reads chunk_size, or reads x into NumPy or Python,
    fails too."""
    variant = {"op": "softmax", "dtype": F32}
    case, _ = _verify_softmax(ctx, _one_pass_sizes(ctx), variant, ctx.seed + 70)  # wrong values named there
    x, chunk = case.data["x"], case.data["chunk"]
    response = ctx.session.request({"op": "call", "target": TARGETS["softmax"], "args": [x, chunk],
                                    "memory_audit": True, "device": ctx.device})
    actual = first_output_checks(response["value"], OUTPUTS["softmax"], TARGETS["softmax"])
    found = mismatches(case, actual)
    if found:  # right a moment ago, wrong under the audit
        raise failure_for(ctx, PROBLEM, case, actual, found, ctx.seed + 70, None)
    if "memory" not in response:
        raise CheckFailure("the call's reply came back without the grader's audit", tried=case.label,
                           hint="Leave torch's dispatch modes and the grader's process alone.")
    fold, width = response["memory"]["widest_fold"], x.shape[-1]
    unread = unread_line(ctx, PROBLEM, case, WHOLE_ROW.id)
    if _folds_too_wide(fold, width, chunk):
        reason = f"one {fold['op']} folds {fold['values']} values of a row at once"
    elif response.get("host_copies"):
        reason = f"it reads x outside torch ({response['host_copies'][0]['call']}), where the audit cannot follow"
    elif unread:
        reason = "online_softmax never reads chunk_size"
    else:
        return f"{width} logits in chunks of {chunk}: no op folds more than {fold['values']} values at once"
    raise CheckFailure(f"the output is right, but {reason}, with chunk_size={chunk}: x was not read chunk by chunk",
                       tried=case.label, named=WHOLE_ROW, where=unread or quoted(ctx, fold if fold["line"] else None))


def _folds_too_wide(fold: dict[str, Any], width: int, chunk: int) -> bool:
    """More values in one op than a chunk (or the chunks' states, merged at once), and the running state."""
    return fold["values"] > max(chunk, -(-width // chunk)) + 1


def judge_call(ctx: CheckContext, request: dict[str, Any], response: dict[str, Any]) -> None:
    """Every online_softmax call is audited (ExerciseSpec.every_call), at every width: a file that
    streamed only at the one-pass check's size, or only while it saw the audit's slowdown, passed
    (eighth red team)."""
    args = request["args"]
    if request.get("target") != TARGETS["softmax"] or len(args) < 2 or not isinstance(args[1], int):
        return
    x, chunk = args[0], args[1]
    fold, width = response["memory"]["widest_fold"], x.shape[-1]
    if chunk > 0 and _folds_too_wide(fold, width, chunk):
        raise CheckFailure(f"the output is right, but one {fold['op']} folds {fold['values']} values of a row at "
                           f"once, with chunk_size={chunk}: x was not read chunk by chunk",
                           tried=f"x {tuple(x.shape)}, chunk_size={chunk}", named=WHOLE_ROW,
                           where=unread_in_call(ctx, request, WHOLE_ROW.id)
                           or quoted(ctx, fold if fold["line"] else None))


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
    "one-pass": "a stream too long to hold: the row is seen one chunk at a time",
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
        Check("one-pass", "x read chunk by chunk, never a whole row at once", check_one_pass, probed=False),
    ),
    every_call=judge_call,
)
