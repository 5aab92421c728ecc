"""Checks for exercises/sliding_window.py: the sliding-window causal mask and attention under it.

    sliding_window_mask(n, window, m=None) -> (n, m) bool
    sliding_window_attention(q, k, v, window) -> out

Query i sits at position p = i + (m − n), as in causal_mask, and sees key j when
p − window < j ≤ p: itself and the window − 1 positions before it. The brute force below
writes that rule out pair by pair, so the reference does not share code with a vectorised
answer (or with its off-by-ones).
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from quizprep.grader import reference
from quizprep.grader.compare import Tolerance
from quizprep.grader.context import CheckContext
from quizprep.grader.exercises.attention import expect_dtype_and_device
from quizprep.grader.lessons import lesson
from quizprep.grader.problem import Case, FunctionProblem, Hypothesis, either, first_output_checks, verify
from quizprep.grader.spec import Check, CheckFailure, ExerciseSpec

F32, F64 = torch.float32, torch.float64
MASK, ATTENTION = "sliding_window_mask", "sliding_window_attention"


def brute_force_mask(n: int, m: int, window: int, rule: str = "contract") -> Tensor:
    """Pair by pair. `rule` names the contract or one of its classic misreadings."""
    mask = torch.zeros(n, m, dtype=torch.bool)
    for i in range(n):
        position = i if rule == "no offset" else i + (m - n)
        for j in range(m):
            back, back_from_index = position - j, i - j  # from the query's position, from its row index
            mask[i, j] = {"contract": 0 <= back < window, "wide": 0 <= back <= window,
                          "narrow": 0 <= back < window - 1, "two-sided": abs(back) < window,
                          "no offset": 0 <= back < window, "no self": 0 < back <= window,
                          "oldest key no offset": 0 <= back and back_from_index < window,
                          # Gemma 2's band, triu·tril of the rows already picked: two-sided, from the row index
                          "band no offset": 0 <= back and abs(back_from_index) < window,
                          "newest key no offset": 0 <= back_from_index and back < window}[rule]
    return mask


def build(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    n, m, window = sizes["n"], sizes.get("m", sizes["n"]), sizes["window"]
    mask = brute_force_mask(n, m, window)
    label = f"n={n}, m={m}, window={window}"
    if variant["op"] == "mask":
        return Case(label=label, sizes=dict(sizes), variant=dict(variant), data={"n": n, "m": m, "window": window},
                    expected={"mask": mask}, tolerance={"mask": Tolerance(0.25)}, dims={"mask": ("query", "key")})
    generator = torch.Generator().manual_seed(seed)
    dtype, heads, d = variant.get("dtype", F32), sizes["heads"], sizes["d"]
    q, k = (torch.randn(2, heads, length, d, generator=generator, dtype=F64).to(dtype) * 2 for length in (n, m))
    v = torch.randn(2, heads, m, d, generator=generator, dtype=F64).to(dtype)
    out, _ = reference.attention(q, k, v, mask)
    logit_scale = float((q.double() @ k.double().transpose(-2, -1)).abs().max()) / math.sqrt(d)
    return Case(label=f"q {tuple(q.shape)}, k {tuple(k.shape)}, {label}, {str(dtype).removeprefix('torch.')}",
                sizes=dict(sizes), variant=dict(variant), data={"q": q, "k": k, "v": v, "window": window},
                expected={"out": out},
                tolerance={"out": Tolerance.working(dtype, logit_scale, float(v.double().abs().max()))},
                dims={"out": ("batch", "head", "query", "feature")})


def run(ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
    data = case.data
    if case.variant["op"] == "mask":
        extra = {"m": data["m"]} if data["m"] != data["n"] else {}
        reply = ctx.call(MASK, data["n"], data["window"], options=options, **extra)
        return first_output_checks(reply.value, ("mask",), MASK)
    reply = ctx.call(ATTENTION, data["q"], data["k"], data["v"], data["window"], options=options)
    return first_output_checks(reply.value, ("out",), ATTENTION)


def shrink(sizes: dict[str, int]) -> list[dict[str, int]]:
    candidates = []
    for key in ("n", "m", "d", "heads"):
        if key in sizes and sizes[key] > 1:
            smaller = {**sizes, key: sizes[key] - 1}
            if smaller["n"] <= smaller.get("m", smaller["n"]):
                candidates.append(smaller)
    return candidates


def _unscaled(case: Case) -> dict[str, Tensor] | None:
    if case.variant["op"] != "attention":
        return None
    data, sizes = case.data, case.sizes
    mask = brute_force_mask(sizes["n"], sizes.get("m", sizes["n"]), sizes["window"])
    return {"out": reference.attention(data["q"], data["k"], data["v"], mask, scale=1.0)[0]}


def _misread(rule: str):
    def predict(case: Case) -> dict[str, Tensor] | None:
        sizes = case.sizes
        n, m = sizes["n"], sizes.get("m", sizes["n"])
        if rule.endswith("no offset") and n == m:
            return None
        wrong = brute_force_mask(n, m, sizes["window"], rule)
        if case.variant["op"] == "mask":
            return {"mask": wrong}
        data = case.data
        return {"out": reference.attention(data["q"], data["k"], data["v"], wrong)[0]}

    return predict


HYPOTHESES = (
    Hypothesis("window-wide", "the window holds window + 1 keys: j ≥ p − window instead of j > p − window",
               "A window of W keys counts the query's own position: keys p − W + 1 … p.",
               lesson("masking-sliding-window-count"), _misread("wide")),
    Hypothesis("window-narrow", "the window holds window − 1 keys: the oldest key of the window is dropped",
               "A window of W keys counts the query's own position: keys p − W + 1 … p, W of them.",
               lesson("masking-sliding-window-count"), _misread("narrow")),
    Hypothesis("window-no-self", "the window leaves out the query's own position (keys p − W … p − 1)",
               "A token attends to itself: the window is p − W < j ≤ p.", lesson("masking-causal-diagonal"),
               _misread("no self")),
    Hypothesis("window-two-sided", "the window is two-sided (|p − j| < W): future keys are visible",
               "The sliding window is still causal: keys after the query's position stay hidden.",
               lesson("kv-cache-free-sliding-window"), _misread("two-sided")),
    Hypothesis("no-scale", "missing the 1/√d scaling", "Divide the scores by math.sqrt(q.shape[-1]).",
               lesson("scaling-why-sqrt-dk"), _unscaled),
    Hypothesis("window-no-offset", "with m > n the queries were placed at positions 0 … n − 1 instead of the last n",
               "Query i sits at position i + (m − n), as in causal_mask(n, m).", lesson("masking-kv-cache-offset"),
               _misread("no offset")),
    Hypothesis("window-edge-no-offset", "with m > n one edge of the window ignores the cache offset: the causal edge "
               "and the window's oldest key are measured from different query positions (i and i + (m − n))",
               "Place query i at p = i + (m − n) and measure both edges from it: keys p − W < j ≤ p.",
               lesson("masking-kv-cache-offset"), either(_misread("oldest key no offset"),
                                                         _misread("newest key no offset"),
                                                         _misread("band no offset")),
               nonfinite_must_match=True),  # top-left causal, shifted window: rows left empty, NaN
)


PROBLEM = FunctionProblem(HYPOTHESES, build, run, shrink)
MASK_CASES = ((6, 6, 3), (7, 7, 1), (5, 5, 5), (4, 4, 9), (1, 1, 2), (8, 8, 4))


def check_mask(ctx: CheckContext) -> str:
    size = ctx.draw(1, 14, 60)
    for n, m, window in (*MASK_CASES, (size, size, ctx.draw(2, 2, size))):
        case, actual = verify(ctx, PROBLEM, {"n": n, "m": m, "window": window}, {"op": "mask"})
        if actual["mask"].dtype != torch.bool:
            raise CheckFailure(f"the mask is {str(actual['mask'].dtype).removeprefix('torch.')}, not bool",
                               tried=case.label, hint="Build it from comparisons, which give booleans.")
    return "windows of 1, 3, 4, 5 and larger than the sequence, against a pair-by-pair brute force"


def check_mask_cache(ctx: CheckContext) -> str:
    rows = ctx.draw(3, 2, 20)
    drawn = (rows, rows + ctx.draw(4, 14, 50), ctx.draw(5, 2, 30))
    for n, m, window in ((3, 10, 4), (1, 9, 3), (4, 6, 8), drawn):
        verify(ctx, PROBLEM, {"n": n, "m": m, "window": window}, {"op": "mask"})
    return "m > n: the queries are the last n positions"


def check_attention(ctx: CheckContext) -> str:
    for i, window in enumerate((3, 1, 12)):
        verify(ctx, PROBLEM, {"n": 9, "m": 9, "window": window, "heads": 2, "d": 5}, {"op": "attention"},
               ctx.seed + i)
    return "windows of 3, 1 and wider than the sequence (plain causal)"


def check_attention_cache(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, {"n": 3, "m": 12, "window": 5, "heads": 2, "d": 4}, {"op": "attention"}, ctx.seed + 10)
    return "3 new queries over 12 cached positions, window 5"


def check_dtypes(ctx: CheckContext) -> str:
    for i, dtype in enumerate((F64, torch.bfloat16, torch.float16)):
        case, actual = verify(ctx, PROBLEM, {"n": 6, "m": 6, "window": 3, "heads": 1, "d": 4},
                              {"op": "attention", "dtype": dtype}, ctx.seed + 20 + i)
        expect_dtype_and_device(ctx, "out", actual["out"], dtype, case.label)
    return "fp64, bf16, fp16"


# The real-world use each check stands for.
USAGE = {
    "mask": "Mistral-7B-v0.1 / Longformer-style local attention masks",
    "mask-cache": "a rolling KV cache: queries are the last n of m positions",
    "attention": "a sliding-window layer's forward pass",
    "attention-cache": "decoding with a sliding window over a cache",
    "dtypes": "inference in float32, bfloat16 and float16",
}

SPEC = ExerciseSpec(
    name="sliding-window",
    title="Sliding-window causal attention",
    entry_points=(MASK, ATTENTION),
    lessons=("masking-sliding-window-count", "masking-causal-diagonal", "kv-cache-free-sliding-window",
             "scaling-why-sqrt-dk", "masking-kv-cache-offset"),
    forbidden=("sdpa", "mha"),
    mask_layout="a (n, m) boolean mask, broadcast over batch and heads",
    checks=(
        Check("mask", "the window mask against brute force", check_mask),
        Check("mask-cache", "the window mask with a KV cache (m > n)", check_mask_cache),
        Check("attention", "attention under the window against brute force", check_attention),
        Check("attention-cache", "windowed attention with a KV cache (m > n)", check_attention_cache),
        Check("dtypes", "dtypes: output matches the input", check_dtypes),
    ),
)
