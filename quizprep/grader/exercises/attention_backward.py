"""Checks for exercises/attention_backward.py: attention's backward pass without autograd.

    attention_backward(q, k, v, o, lse, d_o, causal=False, scale=None, block_size=None) -> (dq, dk, dv)

The reference is autograd in float64 through the forward pass (KV heads expanded to the query
heads, so autograd does the group sum); o and lse are that forward's, rounded to what a kernel
stores (o in the input's dtype, lse in float32 for half inputs). The named mistakes are the
recurrence P = exp(S − lse), dV = Pᵀ dO, dS = P ∘ (dO vᵀ − D), dQ = scale·dS k, dK = scale·dSᵀ q
replayed in float64 with one thing changed. A tiled call runs under the memory audit as flash's.
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from quizprep.grader import reference
from quizprep.grader.compare import Tolerance
from quizprep.grader.context import CheckContext
from quizprep.grader.exercises._backward_forms import BASES, every, kernels, unvisited, whole_blocks
from quizprep.grader.exercises._flash_memory import judge_memory, measured_outside
from quizprep.grader.lessons import lesson
from quizprep.grader.op_lines import unread_line
from quizprep.grader.perf import perf_phase
from quizprep.grader.problem import (
    Case, FunctionProblem, Hypothesis, failure_for, first_output_checks, mismatches, verify,
)
from quizprep.grader.spec import Check, CheckFailure, Diagnosis, ExerciseSpec
from quizprep.grader.value_lines import ValueTell

F32, F64 = torch.float32, torch.float64
ENTRY = "attention_backward"
GRADS = ("dq", "dk", "dv")
INPUTS = ("q", "k", "v", "o", "lse", "d_o")  # the entry point's tensors, in its order


def build(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    generator = torch.Generator().manual_seed(seed)
    dtype, causal = variant.get("dtype", F32), bool(variant.get("causal", False))
    batch, heads, kv_heads, n, m, d = (sizes[key] for key in ("batch", "heads", "kv_heads", "n", "m", "d"))
    q = (torch.randn(batch, heads, n, d, generator=generator, dtype=F64) * 1.5).to(dtype)
    k, v = ((torch.randn(batch, kv_heads, m, d, generator=generator, dtype=F64) * 1.5).to(dtype) for _ in range(2))
    d_o = torch.randn(batch, heads, n, d, generator=generator, dtype=F64).to(dtype)
    scale = variant.get("scale")
    used_scale = 1.0 / math.sqrt(d) if scale is None else scale
    mask = reference.causal_mask(n, m) if causal else None
    leaves = [t.to(F64).requires_grad_() for t in (q, k, v)]
    group = heads // kv_heads
    scores = (leaves[0] @ leaves[1].repeat_interleave(group, 1).transpose(-2, -1)) * used_scale
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    lse = scores.logsumexp(dim=-1)
    out = torch.softmax(scores, dim=-1) @ leaves[2].repeat_interleave(group, 1)
    grads = reference.gradients(out, leaves, d_o.to(F64))
    logit_scale = float(scores.detach().masked_fill(torch.isinf(scores.detach()), 0.0).abs().max())
    stored = F32 if dtype in (torch.float16, torch.bfloat16) else dtype
    expected = {name: grad.detach() for name, grad in zip(GRADS, grads)}
    tolerance = {name: Tolerance.working(dtype, logit_scale, float(grad.abs().max()), factor=4)
                 for name, grad in expected.items()}
    block = sizes.get("block", 0)
    label = (f"q (B={batch}, H={heads}, n={n}, d={d}), k and v (G={kv_heads}, m={m}), causal={causal}"
             f"{'' if scale is None else f', scale={scale}'}{f', block_size={block}' if block else ''}, "
             f"{str(dtype).removeprefix('torch.')}")
    return Case(label=label, sizes=dict(sizes), variant=dict(variant),
                data={"q": q, "k": k, "v": v, "o": out.detach().to(dtype), "lse": lse.detach().to(stored),
                      "d_o": d_o, "causal": causal, "scale": scale, "used_scale": used_scale, "mask": mask},
                expected=expected, tolerance=tolerance,
                dims={"dq": ("batch", "head", "query", "feature"), "dk": ("batch", "kv head", "key", "feature"),
                      "dv": ("batch", "kv head", "key", "feature")})


def run(ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
    data = case.data
    block = case.sizes.get("block") or None
    reply = ctx.call(ENTRY, *(data[name] for name in INPUTS), data["causal"],
                     data["scale"], block, options=options)
    return first_output_checks(reply.value, GRADS, ENTRY)


def shrink(sizes: dict[str, int]) -> list[dict[str, int]]:
    smaller = []
    for key, least in (("batch", 1), ("n", 1), ("m", 2), ("d", 1)):
        if sizes[key] > least:
            changed = {**sizes, key: sizes[key] - 1}
            if changed["m"] >= changed["n"] and (key != "n" or sizes["n"] != sizes["m"]):
                smaller.append(changed)
    if sizes["n"] == sizes["m"] > 2:  # square cases stay square: dV without its transpose needs n = m
        smaller.append({**sizes, "n": sizes["n"] - 1, "m": sizes["m"] - 1})
    return smaller


def simulate(case: Case, *, group_sum: str = "sum", **mistake: Any) -> dict[str, Tensor]:
    """The recurrence in float64 with one mistake."""
    steps, group = recurrence(case, **mistake), case.data["q"].shape[1] // case.data["k"].shape[1]
    return {"dq": steps["dq"], "dk": _reduce(steps["dk"], group, group_sum),
            "dv": _reduce(steps["dv"], group, group_sum)}


def recurrence(case: Case, *, delta: bool = True, p_scale: bool = True, p_lse: str = "lse", dv_transposed: bool = True,
               dq_scale: bool = True, dk_scale: bool = True, masked: bool | str = True,
               offset_sign: int = 1, p_base: tuple[float, float] = (1.0, 1.0),
               dropped: Tensor | None = None) -> dict[str, Tensor]:
    """Each step's value, per query head (dk and dv before the group sum), with one mistake. `p_base`
    (a, b) recomputes P as exp(a·S − b·lse); `dropped` marks (query, key) pairs a loop never visits."""
    data = case.data
    q, o, d_o = (data[name].to(F64) for name in ("q", "o", "d_o"))
    group = q.shape[1] // data["k"].shape[1]
    k, v = (data[name].to(F64).repeat_interleave(group, 1) for name in ("k", "v"))
    scale = data["used_scale"]
    scores = (q @ k.transpose(-2, -1)) * (scale if p_scale else 1.0)
    n, m = scores.shape[-2:]
    rows = torch.arange(n) + offset_sign * (m - n)  # each query's position among the keys
    if data["mask"] is not None and masked:
        future = torch.arange(m) > rows.unsqueeze(-1)
        if masked == "blocks":
            future = whole_blocks(future, case.sizes.get("block", 0))
        scores = scores.masked_fill(future, float("-inf"))
    if dropped is not None:
        scores = scores.masked_fill(dropped, float("-inf"))
    if p_lse == "lse":
        p = torch.exp(p_base[0] * scores - p_base[1] * data["lse"].to(F64).unsqueeze(-1))
    elif p_lse == "softmax":
        p = reference.softmax(scores)
    else:  # exp(S) alone, never normalised
        p = torch.exp(scores)
    d_v = (p.transpose(-2, -1) if dv_transposed else p) @ d_o
    d_p = d_o @ v.transpose(-2, -1)
    d_s = p * (d_p - (d_o * o).sum(-1, keepdim=True)) if delta else p * d_p
    d_q = (scale if dq_scale else 1.0) * d_s @ k
    d_k = (scale if dk_scale else 1.0) * d_s.transpose(-2, -1) @ q
    return {"rows": rows, "p": p, "ds": d_s, "dq": d_q, "dk": d_k, "dv": d_v}


def _reduce(per_head: Tensor, group: int, how: str) -> Tensor:
    if how == "none" or group == 1:
        return per_head
    grouped = per_head.reshape(per_head.shape[0], -1, group, *per_head.shape[2:])
    return {"sum": grouped.sum(2), "mean": grouped.mean(2), "first": grouped[:, :, 0]}[how]


def _mistake(kernel: str = "both", **mistake: Any):
    """The mistake everywhere, or (kernel "kv" or "q") in one kernel of a two-kernel backward only:
    the dK/dV pass over key blocks or the dQ pass over query blocks, the other one correct."""
    def predict(case: Case) -> dict[str, Tensor] | None:
        if case.data["mask"] is None and (mistake.get("masked", True) is not True or "offset_sign" in mistake):
            return None
        if not mistake.get("dv_transposed", True) and case.sizes["n"] != case.sizes["m"]:
            return None
        return one_kernel(case, kernel, simulate(case, **mistake))

    return predict


def one_kernel(case: Case, kernel: str, wrong: dict[str, Tensor], right: dict[str, Tensor] | None = None,
               ) -> dict[str, Tensor]:
    """dq from the dQ kernel, dk and dv from the dK/dV kernel: `wrong` where `kernel` names it."""
    if kernel == "both":
        return wrong
    right = simulate(case) if right is None else right
    return {"dq": (wrong if kernel == "q" else right)["dq"],
            **{name: (wrong if kernel == "kv" else right)[name] for name in ("dk", "dv")}}


def _forms(*mistakes: dict[str, Any]):
    def predict(case: Case) -> list[dict[str, Tensor]] | None:
        return [form for form in (_mistake(**mistake)(case) for mistake in mistakes) if form] or None

    return predict


def _tell(outputs: dict[str, tuple[str, ...]], **mistake: Any) -> ValueTell:
    """The mistaken recurrence's steps as the telltales of the outputs they lead to (dk and dv also
    summed over each group), the correct recurrence's steps as what correct code holds instead."""
    def steps(case: Case, **changed: Any) -> dict[str, list[Tensor]]:
        group = case.data["q"].shape[1] // case.data["k"].shape[1]
        values = recurrence(case, **changed)
        return {name: [value, _reduce(value, group, "sum")] if name in ("dk", "dv") else [value]
                for name, value in values.items()}

    def telltales(case: Case) -> dict[str, list[Tensor]]:
        if _mistake(**mistake)(case) is None:
            return {}
        mistaken = steps(case, **mistake)
        return {output: [value for step in named for value in mistaken[step]] for output, named in outputs.items()}

    def correct(case: Case) -> list[Tensor]:
        """The correct steps, and every query's and key's index: a block of indices is no position."""
        n, m = case.data["q"].shape[-2], case.data["k"].shape[-2]
        return [value for values in steps(case).values() for value in values] + [torch.arange(n), torch.arange(m)]

    return ValueTell(telltales, correct)


def _loop_bounds(sign: int):
    """Causal loop bounds that place query i at i + sign·(m − n) in a two-kernel backward (masks right):
    the dK/dV kernel's first query block, the dQ kernel's last key block, or both (unvisited's)."""
    def predict(case: Case) -> list[dict[str, Tensor]] | None:
        n, m = case.sizes["n"], case.sizes["m"]
        if case.data["mask"] is None or n == m:
            return None
        right, forms = simulate(case), []
        for before_lo, from_hi in unvisited(n, m, case.sizes.get("block", 0), sign):
            kv, q = simulate(case, dropped=before_lo), simulate(case, dropped=from_hi)
            forms += [one_kernel(case, "kv", kv, right), one_kernel(case, "q", q, right),
                      {"dq": q["dq"], "dk": kv["dk"], "dv": kv["dv"]}]
        return forms

    return predict


def _gqa_not_summed(case: Case) -> list[dict[str, Tensor]] | None:
    if case.sizes["heads"] == case.sizes["kv_heads"]:
        return None
    return [simulate(case, group_sum=how) for how in ("none", "first", "mean")]


HYPOTHESES = (
    Hypothesis("backward-no-delta", "the softmax's Jacobian lost its −p pᵀ term: dS = P ∘ dP, without "
               "D = rowsum(dO ∘ O)", "dS = P ∘ (dP − D) with D = (d_o * o).sum(-1, keepdim=True): the softmax "
               "Jacobian is diag(p) − p pᵀ.", lesson("backward-softmax-delta"), _mistake(delta=False),
               tell=_tell({"dq": ("ds",), "dk": ("ds",)}, delta=False)),
    Hypothesis("backward-p-unscaled", "P is recomputed from q kᵀ without the scale: exp(q kᵀ − lse)",
               "Recompute exactly the forward's scores: P = exp(scale · q kᵀ − lse).",
               lesson("backward-recompute-p"),
               _forms(*kernels({"p_scale": False}), {"p_scale": False, "p_lse": "softmax"})),
    Hypothesis("backward-p-no-lse", "P is recomputed as exp(scale · q kᵀ) without subtracting lse: not normalised",
               "P = exp(scale · q kᵀ − lse[..., None]): the stored log-sum-exp normalises each row.",
               lesson("backward-recompute-p"), _forms(*kernels({"p_lse": "none"}))),
    Hypothesis("backward-dv-not-transposed", "dV = P dO, not Pᵀ dO: it only has the right shape when n = m",
               "dV = Pᵀ dO: each key j collects Σ_i P_ij dO_i over the queries that read it.",
               lesson("backward-matmul-shapes"), _mistake(dv_transposed=False),
               tell=_tell({"dv": ("dv",)}, dv_transposed=False)),
    Hypothesis("backward-scale-missing", "the scale is missing from dQ or dK (or both): the chain rule through "
               "S = scale · q kᵀ", "dQ = scale · dS k and dK = scale · dSᵀ q: both factors of S carry the scale.",
               lesson("backward-recompute-p"), _forms({"dq_scale": False}, {"dk_scale": False},
                                                      {"dq_scale": False, "dk_scale": False}),
               tell=_tell({"dq": ("dq",), "dk": ("dk",)}, dq_scale=False, dk_scale=False)),
    Hypothesis("backward-causal-unmasked", "the backward forgets the causal mask: P has weight on future keys",
               "Mask P (set it to 0) where key j > i + (m − n), exactly as the forward did.",
               lesson("masking-before-softmax"), _forms({"masked": False}, {"masked": "blocks"})),
    Hypothesis("causal-offset-sign", "the causal offset has the wrong sign: queries placed at i + (n − m), "
               "before the cache, instead of i + (m − n)", "With m > n the queries are the LAST n positions: key j "
               "is visible to query i when j ≤ i + (m − n), in the masks and loop bounds of both passes.",
               lesson("masking-kv-cache-offset"), every(_forms(*kernels({"offset_sign": -1})), _loop_bounds(-1)),
               tell=_tell({"dq": ("rows",), "dk": ("rows",), "dv": ("rows",)}, offset_sign=-1)),
    Hypothesis("causal-no-offset", "the causal mask ignores the cache offset: with m > n the queries are placed at "
               "positions 0 … n − 1 (top-left) instead of the last n", "Query i sits at position i + (m − n): key j "
               "is visible when j ≤ i + (m − n), as causal_mask(n, m) and the forward had it.",
               lesson("masking-kv-cache-offset"), every(_forms(*kernels({"offset_sign": 0})), _loop_bounds(0)),
               tell=_tell({"dq": ("rows",), "dk": ("rows",), "dv": ("rows",)}, offset_sign=0)),
    Hypothesis("backward-gqa-not-summed", "dK and dV of a KV head are not summed over the query heads that read "
               "it (one head taken, the mean, or H heads returned)", "Compute per query head, then sum each "
               "group: dk.reshape(B, G, H // G, m, d).sum(2).", lesson("gqa-head-mapping"), _gqa_not_summed),
    Hypothesis("backward-lse-base", "P is recomputed with the scores and the natural-log lse in different bases "
               "(exp2 of a term without log2(e), or log2(e) with exp): its rows do not sum to 1",
               "lse is in natural-log units: P = exp(scale · q kᵀ − lse), or with exp2 multiply BOTH terms by "
               "log2(e): exp2(scale · log2(e) · q kᵀ − lse · log2(e)).", lesson("triton-exp2"),
               _forms(*kernels(*({"p_base": base} for base in BASES)))),
)

PROBLEM = FunctionProblem(HYPOTHESES, build, run, shrink)


def _sizes(n: int = 7, m: int = 7, d: int = 4, batch: int = 2, heads: int = 2, kv_heads: int | None = None,
           block: int = 0) -> dict[str, int]:
    return {"batch": batch, "heads": heads, "kv_heads": kv_heads or heads, "n": n, "m": m, "d": d, "block": block}


def check_gradients(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(), {"dtype": F64}, ctx.seed + 10)
    verify(ctx, PROBLEM, _sizes(n=6, m=6, d=5), {}, ctx.seed + 11)
    return "n = m, float64 and float32, against autograd"


def check_cross(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(n=5, m=9, d=3), {}, ctx.seed + 20)
    return "5 queries over 9 keys: every matmul's shape"


def check_causal(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(n=8, m=8), {"causal": True}, ctx.seed + 30)
    verify(ctx, PROBLEM, _sizes(n=4, m=9), {"causal": True}, ctx.seed + 31)
    return "causal, n = m and the last 4 of 9 positions"


def check_scale(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(n=6, m=6, d=4), {"scale": 0.3}, ctx.seed + 40)
    return "an explicit scale=0.3, as SDPA's scale argument"


def check_gqa(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(n=6, m=6, heads=4, kv_heads=2), {"causal": True}, ctx.seed + 50)
    verify(ctx, PROBLEM, _sizes(n=5, m=5, heads=3, kv_heads=1), {}, ctx.seed + 51)
    return "GQA (H=4, G=2, causal) and MQA (H=3, G=1): dk, dv summed over each group"


def check_dtypes(ctx: CheckContext) -> str:
    for dtype, seed in ((torch.bfloat16, 60), (torch.float16, 61)):
        verify(ctx, PROBLEM, _sizes(n=8, m=8, d=8), {"dtype": dtype, "causal": True}, ctx.seed + seed)
    return "bfloat16 and float16 inputs, float32 lse"


def check_tiled(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(n=7, m=11, block=4), {"causal": True}, ctx.seed + 70)
    verify(ctx, PROBLEM, _sizes(n=9, m=9, block=3, heads=4, kv_heads=2), {"causal": True}, ctx.seed + 71)
    return "block_size 4 over 11 keys (not dividing m) and block_size 3 with GQA, causal"


AUDIT_SIZES = {"batch": 2, "heads": 1, "kv_heads": 1, "n": 128, "m": 1031, "d": 8, "block": 32}
WARM_UP_SIZES = {**AUDIT_SIZES, "n": 16, "m": 131}
# Measured from outside, the process grows with every block's temporaries: the correct files grew by
# 1.5–2.5 times the audited scores' bytes after the warm-up, autograd's graph (an audit rolled back
# around torch.autograd.grad, fifth red team) by 29 times.
RESIDENT_SCORES = 6


def _tiled_call(ctx: CheckContext, case: Case, **options: Any) -> dict[str, Any]:
    """The entry point called on `case`'s inputs, causal, with its block size."""
    data = case.data
    return ctx.session.request({"op": "call", "target": ENTRY, "args": [data[name] for name in INPUTS],
                                "kwargs": {"causal": True, "block_size": case.sizes["block"]}, "device": ctx.device,
                                **options})


def check_memory(ctx: CheckContext) -> str:
    """A tiled call that holds all n × m scores (or as many bytes at once) fails here, with that reason."""
    # A first call pages in code and starts pools (megabytes that are not the call's own), as in
    # flash's check: a smaller one first, whose memory the audited call cannot reuse.
    _tiled_call(ctx, build(WARM_UP_SIZES, {"causal": True}, ctx.seed + 79))
    case = build(AUDIT_SIZES, {"causal": True}, ctx.seed + 80)
    response = _tiled_call(ctx, case, memory_audit=True)
    actual = first_output_checks(response["value"], GRADS, ENTRY)
    found = mismatches(case, actual)
    if found:
        raise failure_for(ctx, PROBLEM, case, actual, found, ctx.seed, None)
    # flash's judge reads the lead dimensions as b0, b1: one per (batch, head) pair here
    audited = Case(case.label, {"b0": AUDIT_SIZES["batch"] * AUDIT_SIZES["heads"], **AUDIT_SIZES}, case.variant,
                   case.data, case.expected, case.tolerance)
    try:
        return judge_memory({**response["memory"], **measured_outside(response, ctx.device)}, audited,
                            resident_scores=RESIDENT_SCORES)
    except CheckFailure as failure:
        if failure.named is None:  # the audit could not be made: no mistake to name
            raise
        few_blocks = build(_sizes(n=7, m=11, block=4), {"causal": True}, ctx.seed + 81)
        where = unread_line(ctx, PROBLEM, few_blocks, "backward-materialised-scores")
        raise CheckFailure(failure.message, tried=failure.tried, where=where, named=Diagnosis(
            "backward-materialised-scores", "the tiled backward holds the n×m scores: correct, but not "
            "FlashAttention-2", "For each key block, recompute P from q, that block of k and lse, add its share "
            "to dq, dk, dv, and let it go before the next block.", lesson("flash-tiling-memory"))) from None


USAGE = {
    "gradients": "training a transformer layer: dq, dk, dv of self-attention, checked against autograd",
    "cross": "cross-attention (n ≠ m): the decoder's queries over the encoder's keys",
    "causal": "a decoder's training step, and fine-tuning on a prefix with cached positions",
    "scale": "SDPA's scale argument (e.g. muP's 1/d instead of 1/√d)",
    "gqa": "training Llama-2-70B, Mistral (GQA) and PaLM (MQA): KV gradients summed over each group",
    "dtypes": "mixed-precision training in bfloat16 and float16 with a float32 lse",
    "tiled": "FlashAttention-2's backward: key blocks that do not divide m, recomputing P per block",
    "memory": "the point of the tiled backward: O(n) saved state, never the n × m scores",
}

SPEC = ExerciseSpec(
    name="attention-backward",
    title="Attention's backward pass without autograd (FlashAttention-2's recurrence)",
    entry_points=(ENTRY,),
    lessons=("backward-softmax-delta", "backward-recompute-p", "backward-matmul-shapes", "masking-before-softmax",
             "masking-kv-cache-offset", "gqa-head-mapping", "flash-tiling-memory", "triton-exp2"),
    forbidden=("sdpa", "autograd"),
    checks=(
        Check("gradients", "dq, dk, dv equal autograd's (n = m)", check_gradients),
        Check("cross", "n ≠ m", check_cross),
        Check("causal", "causal, also with m > n", check_causal),
        Check("scale", "an explicit scale", check_scale),
        Check("gqa", "GQA and MQA: KV gradients summed over each group", check_gqa),
        Check("dtypes", "bfloat16 and float16", check_dtypes),
        Check("tiled", "block_size: the tiled backward", check_tiled),
        Check("memory", "a tiled call never holds the n × m scores", check_memory),
    ),
    perf=perf_phase("attention-backward"),
)
