"""Checks for exercises/flash_triton.py: a Triton forward kernel, flash_attention(q, k, v, causal=False)
-> (out, lse) on (B, H, n, d) inputs.

Without CUDA the learner's process runs the kernel through Triton's interpreter (the worker sets
TRITON_INTERPRET=1), so every check keeps to small shapes: the interpreter runs each program in
Python. The named bugs are replayed in float64 by :mod:`._kernel_sim` and :mod:`._kernel_forms`;
their titles say in words what the kernel does, and the report quotes the learner's own line for
them (:mod:`._kernel_words`, found by what the line does: kernels name their variables every way).
The output must come from Triton launches, which the worker counts where every launch passes, and
every element of out from a store of theirs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from quizprep.grader.compare import Tolerance, close_elements, precision_explaining
from quizprep.grader.context import CheckContext
from quizprep.grader.exercises import _kernel_forms as forms
from quizprep.grader.exercises import _kernel_sim as sim
from quizprep.grader.exercises._kernel_words import kernel_terms, unwritten_failure
from quizprep.grader.exercises._attention_problem import LOGIT_VARIANCE
from quizprep.grader.exercises.attention import expect_dtype_and_device
from quizprep.grader.lessons import lesson
from quizprep.grader.problem import Case, FunctionProblem, Hypothesis, first_output_checks, verify
from quizprep.grader.perf import perf_phase
from quizprep.grader.spec import Check, CheckFailure, CheckResult, Diagnosis, ExerciseSpec, PhaseResult, Status

TARGET = "flash_attention"
F32 = torch.float32
DIMS = ("batch", "head", "query")


def build(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    generator = torch.Generator().manual_seed(seed)
    dtype, causal = variant.get("dtype", F32), bool(variant.get("causal"))
    shape = (sizes["batch"], sizes["heads"], sizes["n"], sizes["d"])
    spread = math.sqrt(LOGIT_VARIANCE[variant.get("logits", "mild")])
    q, k = ((torch.randn(shape, generator=generator, dtype=torch.float64) * spread).to(dtype) for _ in range(2))
    v = torch.randn(shape, generator=generator, dtype=torch.float64).to(dtype)
    allowed = sim.causal_allowed(sizes["n"]) if causal else None
    expected = sim.exact(q, k, v, allowed)
    logit_scale = float(sim.scaled_scores(q, k).abs().max())
    layouts = variant.get("layouts")
    layout = f", q, k, v laid out {', '.join(LAYOUT_WORDS[name] for name in layouts)}" if layouts else ""
    label = (f"q, k, v {shape}, {str(dtype).removeprefix('torch.')}, causal={causal}, "
             f"{variant.get('logits', 'mild')} logits{layout}")
    return Case(label=label, sizes=dict(sizes), variant=dict(variant),
                data={"q": q, "k": k, "v": v, "causal": causal}, expected=expected,
                tolerance={"out": Tolerance.working(dtype, logit_scale, float(v.double().abs().max())),
                           "lse": Tolerance.working(dtype, logit_scale, logit_scale)},
                dims={"out": (*DIMS, "feature"), "lse": DIMS})


NO_LAUNCH = Diagnosis(
    "triton-no-launch", "flash_attention launched no Triton kernel: the exercise asks for the output of an "
    "@triton.jit kernel, not of PyTorch operations",
    "Write the forward pass as a @triton.jit kernel (one program per query tile and batch·head) and launch it "
    "from flash_attention with kernel[grid](...); PyTorch only allocates out and lse.",
    lesson("triton-tile-sram"))


NOT_FROM_INPUTS = Diagnosis(
    "triton-inputs-unread", "the kernels flash_attention launched loaded fewer elements than q, k and v hold: "
    "out was computed elsewhere (by PyTorch) and a kernel only carried it",
    "The kernel itself must load the Q tile and every K and V tile and compute the online softmax; PyTorch only "
    "allocates out and lse.", lesson("triton-tile-sram"))


def run(ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
    data = case.data
    options = {**(options or {}), "count_launches": True}
    if case.variant.get("layouts"):
        options["layouts"] = list(case.variant["layouts"])
    reply = ctx.call(TARGET, data["q"], data["k"], data["v"], causal=data["causal"], options=options)
    if reply.launches == 0:
        raise CheckFailure(NO_LAUNCH.title, tried=case.label, named=NO_LAUNCH)
    # Each element of q, k and v is loaded at least once by any kernel that computes attention (from
    # the inputs or from the host's copies of them); a kernel that only copies a result loads far fewer.
    inputs = sum(data[name].numel() for name in "qkv")
    if isinstance(reply.loaded, int) and not isinstance(reply.loaded, bool) and reply.loaded < inputs:
        raise CheckFailure(NOT_FROM_INPUTS.title, tried=case.label, named=NOT_FROM_INPUTS,
                           where=f"the kernels loaded {reply.loaded:,} elements in all; q, k and v hold {inputs:,}")
    holes = reply.unwritten[0] if isinstance(reply.unwritten, list) and reply.unwritten else None
    if isinstance(holes, Tensor) and holes.dtype == torch.bool and bool(holes.any()):
        raise unwritten_failure(case.label, case.sizes, holes, reply.grid)
    return first_output_checks(reply.value, ("out", "lse"), TARGET)


def shrink(sizes: dict[str, int]) -> list[dict[str, int]]:
    """Smaller batch, heads and length; d stays (tl.dot wants at least 16, the contract 64 or 128)."""
    return [{**sizes, key: smaller} for key in ("batch", "heads", "n")
            for smaller in (1, sizes[key] // 2, sizes[key] - 1) if 1 <= smaller < sizes[key]]


def alternatives(sizes: dict[str, int]) -> list[dict[str, int]]:
    n = sizes["n"]
    return [{**sizes, "n": other} for other in ((23, 50) if n < COMPILED_FLOOR else (n * 2 // 3 + 1, n + 77))]


def _allowed(case: Case) -> Tensor | None:
    return sim.causal_allowed(case.sizes["n"]) if case.data["causal"] else None


def _tensors(case: Case) -> tuple[Tensor, Tensor, Tensor]:
    return case.data["q"], case.data["k"], case.data["v"]


def _per_tile(slip):
    """A prediction for every key-tile size in TILES."""
    def predict(case: Case) -> list[dict[str, Tensor]]:
        return [form for block in sim.TILES if (form := slip(case, block))]

    return predict


def _online(**mistake: Any):
    return _per_tile(lambda case, block: sim.online(*_tensors(case), _allowed(case), block, **mistake))


def _divide_in_loop(case: Case) -> list[dict[str, Tensor]]:
    return [sim.online(*_tensors(case), _allowed(case), bn, divide_in_loop=True, block_m=bm)
            for bm in sim.TILES for bn in sim.TILES if bn <= bm]


def _overflow(case: Case) -> dict[str, Tensor]:
    return sim.online(*_tensors(case), _allowed(case), sim.TILES[0], shift=False, dtype=F32)


def _causal_rules(*rules: str):
    def predict(case: Case) -> list[dict[str, Tensor]] | None:
        if not case.data["causal"]:
            return None
        n = case.sizes["n"]
        return [sim.exact(*_tensors(case), sim.block_rule_allowed(n, bm, bn, rule))
                for rule in rules for bm in sim.TILES for bn in sim.TILES if bn <= bm and bm < 2 * n] + \
            (forms.diagonal_twice(case) or [])

    return predict


def _diagonal_unmasked(case: Case) -> list[dict[str, Tensor]] | None:
    return (_causal_rules("diagonal unmasked")(case) or []) + forms.diagonal_unmasked_with_phantoms(case)


def _ragged(case: Case) -> list[dict[str, Tensor]] | None:
    if case.data["causal"]:
        return None  # phantom keys lie in every query's future: the causal mask hides them anyway
    return [form for block in sim.TILES if (form := sim.padded_keys(*_tensors(case), block))]


def _lse_forms(case: Case) -> list[dict[str, Tensor]]:
    expected = case.expected
    scores = sim.scaled_scores(case.data["q"], case.data["k"])
    allowed = _allowed(case)
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    return [{"out": expected["out"], "lse": lse} for lse in sim.wrong_lse(expected["lse"], scores.amax(-1))]


@dataclass(frozen=True)
class HalfDot(Hypothesis):
    """Rounding cannot be replayed bit for bit (the interpreter's tl.dot and a GPU's differ), so
    this bug is named by the size of its errors: float16-sized on float32 inputs."""

    def explains(self, case: Case, actual: dict[str, Tensor]) -> bool:
        if case.data["q"].dtype != F32 or not torch.isfinite(actual["out"]).all():
            return False
        return all(_at_half_precision(case, actual, name) for name in ("out", "lse")) and not \
            close_elements(actual["out"], case.expected["out"], case.tolerance["out"]).all()


def _at_half_precision(case: Case, actual: dict[str, Tensor], name: str) -> bool:
    """Within float32's tolerance, or off by float16-sized errors (TF32 rounds to the same 10 bits)."""
    got, want, tolerance = actual[name], case.expected[name], case.tolerance[name]
    within = bool(close_elements(got, want, tolerance).all())
    return within or precision_explaining(got, want, tolerance) == torch.float16


HYPOTHESES = (
    Hypothesis("triton-no-rescale", "the accumulator is not multiplied by alpha = exp(m_old − m_new) when a "
               "key tile raises the running max (ℓ is)",
               "Rescale acc (and ℓ) by alpha before adding the block's tl.dot(p, v).",
               lesson("flash-online-softmax-bug"),
               lambda case: _online(rescale_acc=False)(case) + forms.no_rescale_running_lse(case)),
    Hypothesis("triton-divide-in-loop", "the accumulator is divided by ℓ inside the key loop: the output is "
               "normalised tile by tile instead of once after the loop",
               "Keep acc unnormalised in the loop; divide by l_i once, after it.", lesson("flash-online-output"),
               _divide_in_loop),
    Hypothesis("no-max-shift", "the scores go into exp without the running max subtracted: exp of large "
               "scores overflows to inf and the output to NaN",
               "Subtract the running max before tl.exp (and rescale by alpha when it grows).",
               lesson("softmax-max-shift"), _overflow, nonfinite_must_match=True),
    Hypothesis("triton-causal-loop-bound", "the causal loop's upper bound is one key block off: the diagonal "
               "block is skipped, or the block past it is computed without the mask",
               "Loop over key blocks up to and including the diagonal one: `hi = (start_m + 1) * BLOCK_M`.",
               lesson("flash-causal-tiles"), _causal_rules("stops early", "one past")),
    Hypothesis("triton-diagonal-unmasked", "the diagonal key tile is not masked element by element: it is used "
               "whole, future keys included",
               "Mask the diagonal block element by element: key j is visible to query i when j ≤ i.",
               lesson("flash-causal-tiles"), _diagonal_unmasked),
    Hypothesis("triton-ragged-edge", "the last key block reads past n: the masked `tl.load` of K has no "
               "`other` and the scores are not set to -inf there, so phantom keys join the softmax",
               "Mask the score tile's columns ≥ n with -inf (tl.where) and load K and V with other=0.0.",
               lesson("triton-ragged-edges"), _ragged),
    Hypothesis("triton-wrong-strides", "a pointer offset uses the wrong strides: contiguous ones (row·d + col), "
               "another input's (K's offsets with V's strides, or one set for q, k and v) or a unit feature "
               "stride, so the kernel reads the wrong elements of a tensor laid out differently",
               "Pass q.stride(), k.stride() and v.stride() separately and build each tensor's pointers from its "
               "own four strides, the feature stride included.",
               lesson("triton-strides"), forms.wrong_strides),
    Hypothesis("triton-no-scale", "the scores are never multiplied by 1/√d: the kernel softmaxes q·kᵀ itself",
               "Multiply the tl.dot(q, k) tile by sm_scale = 1/√d (times log2(e) when you use tl.exp2) before "
               "the running max.", lesson("scaling-why-sqrt-dk"), forms.no_scale),
    Hypothesis("triton-exp2-no-log2e", "tl.exp2 is applied to scores that were not multiplied by log2(e): "
               "2^x = e^(x·ln 2), so every score is shrunk by ln 2 and the softmax is too flat",
               "Fold log2(e) = 1.4427 into the scale (qk_scale = sm_scale * 1.44269504) wherever tl.exp2 "
               "replaces tl.exp, alpha included.", lesson("triton-exp2"), forms.exp2_without_log2e),
    Hypothesis("triton-log2e-with-exp", "log2(e) is folded into the scale but the tile uses tl.exp: every "
               "score is grown by 1.4427, so the softmax is too sharp",
               "Use tl.exp2 with a scale that includes log2(e), or tl.exp with sm_scale alone.",
               lesson("triton-exp2"), forms.log2e_with_exp),
    Hypothesis("triton-sum-not-rescaled", "the running sum ℓ is not multiplied by alpha = exp(m_old − m_new) "
               "when a key tile raises the running max (the accumulator is)",
               "Update ℓ as l_i = l_i * alpha + tl.sum(p, 1): ℓ and the accumulator share one scale.",
               lesson("softmax-online-rescale"), forms.sum_not_rescaled),
    Hypothesis("triton-causal-strict", "the causal mask compares with `>` where it needs `>=`: each query's "
               "own key is masked, and the first row sees no key at all (0/0)",
               "Query i sees keys j ≤ i: keep the score where offs_m[:, None] >= offs_n[None, :].",
               lesson("flash-causal-tiles"), forms.causal_strict),
    Hypothesis("triton-k-other-inf", "the K tile is loaded with other=-inf past n and the scores are not "
               "masked: q·(-inf, …) is inf − inf = NaN for the missing keys, and the NaN spreads to every row",
               "Load K (and V) with other=0.0 and mask the score tile instead: "
               "tl.where(offs_n[None, :] < N, s, float('-inf')).", lesson("triton-ragged-edges"),
               forms.k_other_inf, nonfinite_must_match=True),
    Hypothesis("triton-max-init-zero", "the running max m starts at 0 instead of -inf: a row whose scores all "
               "lie far below 0 underflows (exp(s − 0) = 0), ℓ stays 0 and the row is 0/0",
               "Start m_i at float('-inf') (tl.full([BLOCK_M], float('-inf'), tl.float32)), ℓ at 0.",
               lesson("softmax-max-shift"), forms.max_start_zero, nonfinite_must_match=True),
    forms.UnmaskedTailStore(
        "triton-unmasked-store", "the out store has no row mask: the last query tile's rows past n are written "
        "over the first rows of the next head's output", "Store with the rows' mask: tl.store(out_ptrs, acc, "
        "mask=offs_m[:, None] < N); a masked store is the only guard at the ragged edge.",
        lesson("triton-ragged-edges"), lambda case: None),
    forms.LseIgnoresBatch(
        "triton-lse-batch", "the lse pointer ignores the batch: every batch writes its log-sum-exp over batch "
        "0's rows, and the other batches' rows are never written",
        "Offset the lse pointer by the whole (batch, head) index: Lse + (b * H + h) * N + offs_m.",
        lesson("triton-lse-backward"), lambda case: None),
    HalfDot("triton-half-dot", "P·V is computed at float16 precision on float32 inputs (P or V cast to "
               "float16 for tl.dot, or, compiled, TF32: tl.dot's GPU default for float32)",
               "Keep tl.dot's inputs in the input dtype, accumulate in float32 (the default out_dtype), and for "
               "float32 inputs pass input_precision=\"ieee\".",
               lesson("triton-fp32-accumulate"), lambda case: None),
    Hypothesis("triton-wrong-lse", "the lse store holds something other than m + log ℓ: log2 units, log ℓ "
               "without the max, or the max alone",
               "Store m_i + log(l_i) in natural-log units (with exp2, convert: (m₂ + log2 ℓ)·ln 2).",
               lesson("triton-lse-backward"), _lse_forms),
)

PROBLEM = FunctionProblem(HYPOTHESES, build, run, shrink, alternatives)
in_kernel_terms = kernel_terms(next(h for h in HYPOTHESES if h.id == "triton-wrong-strides"))


# Lengths per check: interpreted (each program runs in Python, tiles of 16 in the example) and
# compiled on a GPU, where kernels pick tiles of 64 to 128: a length within one tile would hide every
# bug that needs a second key block (the rescale, the causal loop bound, dividing in the loop).
LENGTHS = {"forward": ((37, 21), (300, 211)), "causal": ((45,), (333,)), "stability": ((24,), (200,)),
           "strides": ((19,), (150,)), "float16": ((33,), (333,))}
COMPILED_FLOOR = 100  # every compiled length is above it, every interpreted one below


def _sizes(batch: int, heads: int, n: int, d: int) -> dict[str, int]:
    return {"batch": batch, "heads": heads, "n": n, "d": d}


def _lengths(ctx: CheckContext, check: str) -> tuple[int, ...]:
    interpreted, compiled = LENGTHS[check]
    return compiled if ctx.device == "cuda" else interpreted


@in_kernel_terms
def check_forward(ctx: CheckContext) -> str:
    first, second = _lengths(ctx, "forward")
    for i, (sizes, logits) in enumerate(((_sizes(1, 2, first, 64), "peaky"), (_sizes(2, 1, second, 128), "mild"))):
        verify(ctx, PROBLEM, sizes, {"logits": logits}, ctx.seed + i)
    return f"n = {first} and {second} (not multiples of a tile), d = 64 and 128"


@in_kernel_terms
def check_causal(ctx: CheckContext) -> str:
    (n,) = _lengths(ctx, "causal")
    verify(ctx, PROBLEM, _sizes(1, 2, n, 64), {"causal": True, "logits": "peaky"}, ctx.seed + 10)
    return f"n = {n}, keys j ≤ i"


@in_kernel_terms
def check_stability(ctx: CheckContext) -> str:
    (n,) = _lengths(ctx, "stability")
    verify(ctx, PROBLEM, _sizes(2, 2, n, 64), {"logits": "huge", "causal": True}, ctx.seed + 20)
    return "scaled logits in the hundreds, causal, batch and heads 2, float32"


# q as a transposed view of a (B, n, H, d) projection, K as every other element of a fused buffer,
# V as the first n slots of a feature-major cache with room for 2n: three layouts, so a kernel that
# reads one input through another's strides is caught, and every swap stays inside the memory read.
LAYOUTS = ("heads-major", True, "cache-transposed")
LAYOUT_WORDS = {"heads-major": "(B, n, H, d)", True: "with feature stride 2", "cache-transposed": "feature-major"}


@in_kernel_terms
def check_strides(ctx: CheckContext) -> str:
    (n,) = _lengths(ctx, "strides")
    verify(ctx, PROBLEM, _sizes(1, 2, n, 64), {"layouts": LAYOUTS}, ctx.seed + 30)
    return "q, k and v each in its own layout: a transposed view, a strided slice, a feature-major cache"


@in_kernel_terms
def check_half(ctx: CheckContext) -> str:
    (n,) = _lengths(ctx, "float16")
    case, actual = verify(ctx, PROBLEM, _sizes(1, 1, n, 64), {"dtype": torch.float16, "causal": True},
                          ctx.seed + 40)
    expect_dtype_and_device(ctx, "out", actual["out"], torch.float16, case.label)
    return "float16 in, float16 out"


def perf_on_gpu(ctx: CheckContext) -> PhaseResult:
    """Timed against SDPA only when compiled: the interpreter runs each program in Python."""
    if ctx.device != "cuda":
        return PhaseResult([CheckResult("perf", "speed against PyTorch SDPA", Status.SKIP,
                                        "the Triton track is timed on a CUDA GPU only (here it runs interpreted)")])
    return perf_phase("flash-triton")(ctx)


USAGE = {
    "forward": "a model's attention layer: sequence lengths that are not a multiple of the tile, d = 64 and 128",
    "causal": "a decoder's prefill: whole tiles above the diagonal skipped, the diagonal tile masked",
    "stability": "long contexts and unnormalised logits in a causal decoder, several sequences and heads: the "
                 "running maximum must start at -inf and shift every tile",
    "strides": "q a transposed view of a (B, n, H, d) projection, K a slice of a fused buffer, V a view of a "
               "feature-major cache: each tensor with its own strides",
    "float16": "inference in half precision, with the softmax and accumulator kept in float32",
}

SPEC = ExerciseSpec(
    name="flash-triton",
    title="FlashAttention forward kernel in Triton",
    entry_points=(TARGET,),
    lessons=("flash-online-softmax-bug", "flash-online-output", "softmax-max-shift", "flash-causal-tiles",
             "triton-ragged-edges", "triton-strides", "triton-fp32-accumulate", "triton-lse-backward",
             "scaling-why-sqrt-dk", "triton-exp2", "softmax-online-rescale", "triton-tile-sram"),
    forbidden=("sdpa", "mha", "softmax"),
    checks=(
        Check("forward", "out and log-sum-exp, ragged n, d = 64 and 128", check_forward),
        Check("causal", "causal: block skipping and the diagonal mask", check_causal),
        Check("stability", "numerical stability: logits in the hundreds", check_stability),
        Check("strides", "q, k, v each in its own layout: every stride of each used", check_strides),
        Check("float16", "float16 inputs", check_half),
    ),
    perf=perf_on_gpu,
    gpu_kernels=True,
)
