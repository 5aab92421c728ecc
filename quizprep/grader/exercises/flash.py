"""Checks for exercises/flash.py: flash_attention(q, k, v, *, causal=False, block_size=64).

The outputs are those of exact attention, so the reference is the ordinary float64 one. The
named slips, simulated tile by tile with the learner's own block size, live in _flash_mistakes.py.
The memory check runs the learner's call under the memory audit
(:mod:`quizprep.grader.learner_side.memaudit`) inside their process.
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from quizprep.grader import reference
from quizprep.grader.compare import Tolerance
from quizprep.grader.context import CheckContext
from quizprep.grader.exercises._attention_problem import LOGIT_VARIANCE, draw_case
from quizprep.grader.exercises._flash_memory import judge_call, judge_memory, measured_outside
from quizprep.grader.exercises._flash_mistakes import HYPOTHESES
from quizprep.grader.exercises.attention import expect_dtype_and_device
from quizprep.grader.op_lines import unread_line
from quizprep.grader.problem import (
    Case, FunctionProblem, expect_unchanged, failure_for, first_output_checks, mismatches, verify,
)
from quizprep.grader.spec import Check, CheckFailure, ExerciseSpec

TARGET = "flash_attention"
F32, F64 = torch.float32, torch.float64
LEAD_NAMES = {0: (), 1: ("batch",), 2: ("batch", "head")}


def _sizes(lead: tuple[int, ...], n: int, m: int, dk: int, dv: int, block: int) -> dict[str, int]:
    sizes = {f"b{i}": size for i, size in enumerate(lead)}
    sizes.update(n=n, m=m, dk=dk, dv=dv, block=block)
    return sizes


def _lead(sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(sizes[f"b{i}"] for i in range(2) if f"b{i}" in sizes)


def build(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    return draw_case(_build_once, sizes, variant, seed, _shortcuts if sizes["m"] > 1 else lambda case: {})


def _shortcuts(case: Case) -> dict[str, Tensor]:
    v, shape = case.data["v"].double(), case.expected["out"].shape
    return {"zeros": torch.zeros(shape, dtype=F64), "mean of V": v.mean(dim=-2, keepdim=True).expand(shape)}


def _build_once(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    generator = torch.Generator().manual_seed(seed)
    dtype, causal = variant.get("dtype", F32), bool(variant.get("causal"))
    lead, n, m, dk, dv = _lead(sizes), sizes["n"], sizes["m"], sizes["dk"], sizes["dv"]
    spread = math.sqrt(LOGIT_VARIANCE[variant.get("logits", "mild")])
    q = (torch.randn(*lead, n, dk, generator=generator, dtype=F64) * spread).to(dtype)
    k = (torch.randn(*lead, m, dk, generator=generator, dtype=F64) * spread).to(dtype)
    v = torch.randn(*lead, m, dv, generator=generator, dtype=F64).to(dtype)
    mask = reference.causal_mask(n, m) if causal else None
    out, _ = reference.attention(q, k, v, mask)
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(dk)
    seen = scores if mask is None else scores.masked_fill(~mask, 0.0)
    logit_scale = float(seen.abs().max())
    block = sizes["block"]
    label = (f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}, {str(dtype).removeprefix('torch.')}, "
             f"causal={causal}, " + ("default block_size" if variant.get("defaults") else f"block_size={block}")
             + f", {variant.get('logits', 'mild')} logits")
    return Case(label=label, sizes=dict(sizes), variant=dict(variant),
                data={"q": q, "k": k, "v": v, "causal": causal, "block": block},
                expected={"out": out},
                tolerance={"out": Tolerance.working(dtype, logit_scale, float(v.double().abs().max()))},
                dims={"out": (*LEAD_NAMES[len(lead)], "query", "feature")})


def run(ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
    data = case.data
    kwargs = {} if case.variant.get("defaults") else {"causal": data["causal"], "block_size": data["block"]}
    reply = ctx.call(TARGET, data["q"], data["k"], data["v"], options=options, **kwargs)
    return first_output_checks(reply.value, ("out",), TARGET)


def shrink(sizes: dict[str, int]) -> list[dict[str, int]]:
    candidates = []
    if _lead(sizes):
        candidates.append(_sizes(_lead(sizes)[1:], *(sizes[key] for key in ("n", "m", "dk", "dv", "block"))))
    for key in ("n", "m", "dk", "dv", "block"):
        for smaller in (1, sizes[key] // 2, sizes[key] - 1):
            if 1 <= smaller < sizes[key]:
                candidates.append({**sizes, key: smaller})
    return candidates


def alternatives(sizes: dict[str, int]) -> list[dict[str, int]]:
    """Sizes that tell mistakes apart; the last has no tail block, and its first query tile ends on a
    block start (a dropped tail and a causal loop stopping one block early look alike otherwise)."""
    block = sizes["block"]
    shapes = ((2 * block + 3, 3 * block + 1), (block + 2, 4 * block), (2 * block - 1, 4 * block))
    return [_sizes(_lead(sizes), n, m, 5, 3, block) for n, m in shapes]


PROBLEM = FunctionProblem(HYPOTHESES, build, run, shrink, alternatives)


def check_shapes(ctx: CheckContext) -> str:
    cases = [((), 5, 7, 4, 6, 3), ((3,), 1, 6, 8, 5, 4), ((2, 3), 6, 4, 8, 3, 2), ((2,), 4, 1, 3, 2, 4)]
    for i, sizes in enumerate(cases):
        verify(ctx, PROBLEM, _sizes(*sizes), {"dtype": F64}, ctx.seed + i)
    return "0–2 leading dims, n ≠ m, d_k ≠ d_v, one query, one key"


def check_block_sizes(ctx: CheckContext) -> str:
    blocks = (1, 5, 16, 32, 53, 64, 100)
    for i, block in enumerate(blocks):
        verify(ctx, PROBLEM, _sizes((2,), 37, 53, 8, 5, block), {"dtype": F64, "logits": "peaky"}, ctx.seed + 10 + i)
    return f"m = 53 keys in blocks of {', '.join(map(str, blocks))}"


def check_defaults(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes((2,), 20, 150, 8, 4, 64), {"dtype": F32, "defaults": True}, ctx.seed + 20)
    return "no keywords: block_size=64 over 150 keys, not causal"


def check_causal(ctx: CheckContext) -> str:
    for i, block in enumerate((8, 13, 45, 64)):
        verify(ctx, PROBLEM, _sizes((2,), 45, 45, 8, 4, block), {"dtype": F64, "causal": True, "logits": "peaky"},
               ctx.seed + 30 + i)
    return "n = m = 45 in blocks of 8, 13, 45, 64"


def check_causal_cache(ctx: CheckContext) -> str:
    # (7, 3): a tail of two keys and a query tile ending on a block start, so a dropped tail and a
    # causal loop that stops one block early differ
    for i, (n, block) in enumerate(((6, 16), (6, 7), (1, 5), (7, 3))):
        verify(ctx, PROBLEM, _sizes((2,), n, 50, 8, 4, block), {"dtype": F64, "causal": True, "logits": "peaky"},
               ctx.seed + 40 + i)
    return "queries are the last n of m = 50 positions, as causal_mask(n, m)"


def check_stability(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes((2,), 9, 40, 16, 4, 8), {"dtype": F32, "logits": "huge"}, ctx.seed + 50)
    return "scaled logits in the hundreds, float32"


def check_dtypes(ctx: CheckContext) -> str:
    for i, dtype in enumerate((F64, F32, torch.bfloat16, torch.float16)):
        case, actual = verify(ctx, PROBLEM, _sizes((2,), 7, 20, 8, 4, 6), {"dtype": dtype, "causal": True},
                              ctx.seed + 60 + i)
        expect_dtype_and_device(ctx, "out", actual["out"], dtype, case.label)
    return "fp64, fp32, bf16, fp16"


def check_not_mutated(ctx: CheckContext) -> None:
    case = build(_sizes((2,), 5, 10, 4, 3, 4), {"dtype": F32, "causal": True}, ctx.seed + 70)
    data = case.data
    reply = ctx.call(TARGET, data["q"], data["k"], data["v"], causal=True, block_size=4,
                     options={"return_inputs": True})
    expect_unchanged(reply, (("q", data["q"]), ("k", data["k"]), ("v", data["v"])), case.label,
                     "Avoid in-place ops (q.mul_(), k -= ...) on the inputs.")


# Full scores of 8.4 MB, well above what a tiled call's own growth measures from outside (about
# 1 MB), in as many blocks as before: the batch dimension is free for a vectorised loop.
AUDIT_SIZES = _sizes((16,), 128, 1031, 8, 8, 32)
WARM_UP_SIZES = _sizes((16,), 16, 131, 8, 8, 32)
# Memory that grows as the block shrinks (something kept per block, e.g. every block's partial
# output stacked at the end) is measured on few queries, so that code tiling the queries as well
# stays fast at the small block: a flash loop's memory does not grow.
GROWTH_SIZES = (_sizes((2,), 8, 1031, 8, 8, 32), _sizes((2,), 8, 1031, 8, 8, 8))


def check_memory(ctx: CheckContext) -> str:
    """A correct answer that materialises the scores, or keeps every block's partial output,
    fails here, with that reason."""
    # A small call first: a first call also pages in code and starts pools, megabytes that are
    # not the call's own (smaller than the audited one, so its memory cannot be reused there).
    warm = build(WARM_UP_SIZES, {"dtype": F32, "causal": True}, ctx.seed + 81).data
    ctx.session.request({"op": "call", "target": TARGET, "args": [warm["q"], warm["k"], warm["v"]],
                         "kwargs": {"causal": True, "block_size": warm["block"]}, "device": ctx.device})
    audits = [_audited(ctx, build(sizes, {"dtype": F32, "causal": True}, ctx.seed + 80))
              for sizes in (AUDIT_SIZES, *GROWTH_SIZES)]
    try:
        return judge_memory(*audits[0], growth=(audits[1], audits[2]))
    except CheckFailure as failure:
        if failure.named is not None and not failure.where:
            few_blocks = build(_sizes((2,), 7, 20, 8, 4, 8), {"dtype": F32, "causal": True}, ctx.seed + 82)
            failure.where = unread_line(ctx, PROBLEM, few_blocks, failure.named.id)
        raise


def _audited(ctx: CheckContext, case: Case) -> tuple[dict[str, Any], Case]:
    """The worker's audit of one call, with how far the grader saw its process grow (CPU only: on
    a GPU the tensors are not in the process's resident memory, and CUDA's own pages are)."""
    data = case.data
    response = ctx.session.request({"op": "call", "target": TARGET, "args": [data["q"], data["k"], data["v"]],
                                    "kwargs": {"causal": True, "block_size": data["block"]},
                                    "memory_audit": True, "device": ctx.device})
    actual = first_output_checks(response["value"], ("out",), TARGET)
    found = mismatches(case, actual)
    if found:
        raise failure_for(ctx, PROBLEM, case, actual, found, ctx.seed, None)
    if "memory" not in response:
        raise CheckFailure("the call's reply came back without the grader's memory audit", tried=case.label,
                           hint="Leave torch's dispatch modes and the grader's process alone.")
    return {**response["memory"], **measured_outside(response, ctx.device)}, case


# The real-world use each check stands for.
USAGE = {
    "shapes": "batched heads, cross-attention (n ≠ m), d_k ≠ d_v, decoding's single query",
    "block-sizes": "kernels tuned per GPU: block sizes that do or do not divide the sequence",
    "defaults": "a caller that relies on the documented defaults",
    "causal": "a decoder's prefill: the diagonal tile masked element by element",
    "causal-cache": "chunked prefill and decoding: queries are the last n of m positions",
    "stability": "large logits in long contexts: the running maximum must shift every block",
    "dtypes": "inference in float32, bfloat16 and float16",
    "no-mutation": "q, k, v reused by the caller",
    "memory": "the point of FlashAttention: O(n) extra memory, never the n × m scores",
}

SPEC = ExerciseSpec(
    name="flash",
    title="FlashAttention-style tiled forward pass",
    entry_points=(TARGET,),
    lessons=("flash-online-softmax-bug", "flash-online-output", "flash-causal-tiles", "softmax-max-shift",
             "masking-causal-diagonal", "masking-kv-cache-offset", "scaling-why-sqrt-dk"),
    forbidden=("sdpa", "mha", "softmax"),
    checks=(
        Check("shapes", "shapes: leading dims, n ≠ m, d_k ≠ d_v, length 1", check_shapes),
        Check("block-sizes", "many block sizes, dividing m or not", check_block_sizes),
        Check("defaults", "default arguments: block_size=64, not causal", check_defaults),
        Check("causal", "causal, element by element across blocks", check_causal),
        Check("causal-cache", "causal with m > n: queries are the last n positions", check_causal_cache),
        Check("stability", "numerical stability: logits in the hundreds", check_stability),
        Check("dtypes", "dtypes: output matches the input", check_dtypes),
        Check("no-mutation", "inputs are not modified", check_not_mutated),
        Check("memory", "memory: never all n×m scores at once", check_memory, probed=False),
    ),
    every_call=judge_call,
)
