"""Checks for exercises/attention.py: scaled_dot_product_attention(q, k, v, mask=None). The cases
and the mistakes they are tested against are in :mod:`._attention_problem`."""
from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from quizprep.grader import reference
from quizprep.grader.compare import Mismatch, find_mismatch
from quizprep.grader.context import CheckContext
from quizprep.grader.exercises._attention_problem import PROBLEM, TARGET, build, case_sizes, run
from quizprep.grader.lessons import lesson
from quizprep.grader.perf import perf_phase
from quizprep.grader.problem import (
    Case, dtype_not_kept, expect_deterministic, expect_forward, expect_gradient, expect_unchanged,
    failure_for, first_output_checks, mismatches, verify,
)
from quizprep.grader.spec import Check, CheckFailure, ExerciseSpec

F32, F64 = torch.float32, torch.float64


def check_shapes(ctx: CheckContext) -> str:
    cases = [((), 5, 7, 4, 6), ((3,), 1, 6, 8, 5), ((2, 3), 6, 4, 8, 3), ((2, 2, 3), 4, 5, 6, 7), ((2,), 4, 1, 3, 2)]
    for i, (lead, n, m, dk, dv) in enumerate(cases):
        verify(ctx, PROBLEM, case_sizes(lead, n, m, dk, dv), {"dtype": F64}, ctx.seed + i)
    return "0–3 leading dims, n ≠ m, d_k ≠ d_v, length 1"


def check_values(ctx: CheckContext) -> str:
    for i, logits in enumerate(("mild", "peaky")):
        verify(ctx, PROBLEM, case_sizes((2, 3), 6, 9, 8, 5), {"dtype": F32, "logits": logits}, ctx.seed + 10 + i)
    return "mild and peaky logits, float32"


def check_mask(kind: str, sizes: dict[str, int]):
    def run_check(ctx: CheckContext) -> None:
        verify(ctx, PROBLEM, sizes, {"dtype": F32, "mask": kind, "logits": "peaky"}, ctx.seed + 20)

    return run_check


def check_arbitrary_masks(ctx: CheckContext) -> str:
    for kind in ("random", "random2d"):
        check_mask(kind, case_sizes((2, 3), 5, 7, 8, 4))(ctx)
    return "(B, 1, n, m) and (n, m) boolean masks"


def check_kv_cache(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, case_sizes((2, 2), 3, 8, 8, 5), {"dtype": F32, "mask": "causal"}, ctx.seed + 21)
    return "3 new queries over 8 cached positions"


def check_stability(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, case_sizes((2, 2), 5, 7, 16, 4), {"dtype": F32, "logits": "huge"}, ctx.seed + 30)
    return "scaled logits in the hundreds, float32"


def check_dtypes(ctx: CheckContext) -> str:
    for i, dtype in enumerate((torch.float64, torch.float32, torch.bfloat16, torch.float16)):
        case, actual = verify(ctx, PROBLEM, case_sizes((2, 2), 5, 6, 8, 4),
                              {"dtype": dtype, "mask": "random"}, ctx.seed + 40 + i)
        for name, tensor in actual.items():
            expect_dtype_and_device(ctx, name, tensor, dtype, case.label)
    return "fp64, fp32, bf16, fp16"


def expect_dtype_and_device(ctx: CheckContext, name: str, tensor: Tensor, dtype: torch.dtype, label: str) -> None:
    if tensor.dtype != dtype:
        raise CheckFailure(f"`{name}` is {str(tensor.dtype).removeprefix('torch.')} for "
                           f"{str(dtype).removeprefix('torch.')} inputs", tried=label,
                           hint="Return the input's dtype: no .float() / .double() on the way out, "
                                "or cast back with .to(q.dtype).", named=dtype_not_kept(tensor.dtype, dtype))
    device = getattr(tensor, "quizprep_device", "cpu")
    if device.split(":")[0] != ctx.device.split(":")[0]:
        raise CheckFailure(f"`{name}` came back on {device} for inputs on {ctx.device}", tried=label,
                           hint="Create new tensors with device=q.device (or use torch.*_like).")


def check_gradients(ctx: CheckContext) -> str:
    case = build(case_sizes((2, 2), 4, 5, 6, 3), {"dtype": F64, "mask": "random"}, ctx.seed + 50)
    data = case.data
    grad_out = torch.randn(case.expected["out"].shape, generator=ctx.generator(51), dtype=F64)
    reply = ctx.call(TARGET, data["q"], data["k"], data["v"], mask=data["mask"],
                     options={"requires_grad": True, "grad_output": grad_out, "grad_path": [0]})
    actual = first_output_checks(reply.value, ("out", "weights"), TARGET)
    expect_forward(ctx, PROBLEM, case, actual)
    if reply.grad_error:
        raise CheckFailure(f"no gradient: {reply.grad_error}", tried=case.label,
                           hint="Use differentiable torch operations end to end.")
    leaves = [data[name].detach().clone().requires_grad_(True) for name in ("q", "k", "v")]
    q, k, v = leaves
    out, _ = reference.attention(q, k, v, data["mask"])
    expected = reference.gradients(out, leaves, grad_out)
    logit_scale = case.tolerance["weights"].magnitude - 1.0
    for index, (name, want) in enumerate(zip(("q", "k", "v"), expected)):
        expect_gradient(name, reply.grads.get(f"arg{index}"), want, logit_scale, case.label,
                        case.dims["out"][:-2] + ("row", "col"))
    return "d/dq, d/dk, d/dv in float64 with a mask"


def check_not_mutated(ctx: CheckContext) -> None:
    case = build(case_sizes((2,), 4, 6, 5, 3), {"dtype": F32, "mask": "random"}, ctx.seed + 60)
    data = case.data
    reply = ctx.call(TARGET, data["q"], data["k"], data["v"], mask=data["mask"], options={"return_inputs": True})
    expect_unchanged(reply, (("q", data["q"]), ("k", data["k"]), ("v", data["v"])), case.label,
                     "Avoid in-place ops (x.mul_(), x -= ..., masked_fill_) on the inputs.",
                     kwargs=(("mask", data["mask"]),))


def check_deterministic(ctx: CheckContext) -> None:
    expect_deterministic(ctx, PROBLEM, build(case_sizes((2, 2), 5, 6, 4, 3), {"dtype": F32, "mask": "causal"},
                                             ctx.seed + 70))


def check_noncontiguous(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, case_sizes((2, 2), 5, 6, 4, 3), {"dtype": F32, "mask": "random"}, ctx.seed + 80,
           options={"noncontiguous": True})
    return "strided (non-contiguous) q, k, v and mask"


def check_layouts(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, case_sizes((2, 3), 5, 6, 4, 3), {"dtype": F32, "mask": "random"}, ctx.seed + 85,
           options={"noncontiguous": "transposed"})
    verify(ctx, PROBLEM, case_sizes((2, 3), 5, 6, 4, 3), {"dtype": F32, "shared_kv_heads": True}, ctx.seed + 86,
           options={"noncontiguous": "expanded"})
    return "column-major q, k, v (after .transpose); k, v expanded over heads with stride 0 (GQA's expand)"


def _learner_outputs(ctx: CheckContext, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None) -> dict[str, Tensor]:
    kwargs: dict[str, Any] = {"mask": mask} if mask is not None else {}
    return first_output_checks(ctx.call(TARGET, q, k, v, **kwargs).value, ("out", "weights"), TARGET)


def _unchanged(ctx: CheckContext, case: Case, before: Tensor, after: Tensor, what: str, hint: str,
               quiz: str) -> None:
    mismatch = find_mismatch("out", after, before, case.tolerance["out"], case.dims["out"])
    if mismatch:
        raise _failure(ctx, case, what, hint, quiz, mismatch)


def _failure(ctx: CheckContext, case: Case, what: str, hint: str, quiz: str, mismatch: Mismatch) -> CheckFailure:
    """A metamorphic check's failure, named as the case's own comparison names it."""
    actual = run(ctx, case)
    found = mismatches(case, actual)
    failure = failure_for(ctx, PROBLEM, case, actual, found, ctx.seed, None, message=what) if found else \
        CheckFailure(what, tried=case.label, hint=hint, quiz=quiz)
    failure.mismatches.insert(0, mismatch)
    failure.hint = failure.hint or hint
    failure.quiz = failure.quiz or quiz
    return failure


def check_masked_keys_replaced(ctx: CheckContext) -> str:
    case = build(case_sizes((3, 2), 5, 8, 6, 4), {"dtype": F32, "mask": "padding"}, ctx.seed + 90)
    data = case.data
    before = _learner_outputs(ctx, data["q"], data["k"], data["v"], data["mask"])["out"]
    hidden = ~data["mask"].reshape(data["mask"].shape[0], 1, data["mask"].shape[-1], 1)
    generator = ctx.generator(91)
    k = torch.where(hidden, torch.randn(data["k"].shape, generator=generator).to(F32) * 2, data["k"])
    v = torch.where(hidden, torch.randn(data["v"].shape, generator=generator).to(F32) * 2, data["v"])
    after = _learner_outputs(ctx, data["q"], k, v, data["mask"])["out"]
    _unchanged(ctx, case, before, after, "changing masked-out (padding) keys and values changed the output",
               "Masked keys must get exactly zero weight: fill their scores with -inf before the softmax.",
               lesson("masking-padding-keys"))
    return "padding keys and values replaced by other random values"


def check_permutation(ctx: CheckContext) -> str:
    case = build(case_sizes((2,), 4, 7, 5, 3), {"dtype": F32}, ctx.seed + 100)
    data = case.data
    before = _learner_outputs(ctx, data["q"], data["k"], data["v"], None)
    order = torch.randperm(data["k"].shape[-2], generator=ctx.generator(101))
    after = _learner_outputs(ctx, data["q"], data["k"][..., order, :], data["v"][..., order, :], None)
    _unchanged(ctx, case, before["out"], after["out"], "permuting key/value rows together changed the output",
               "Attention is a weighted sum over keys: it must not depend on their order.", lesson("softmax-axis"))
    if tuple(before["weights"].shape) != tuple(case.expected["weights"].shape):  # `order` indexes its key axis
        raise _failure(ctx, case, "the weights do not have one column per key", "weights are (..., n, m).",
                       lesson("softmax-axis"), Mismatch("weights", tuple(before["weights"].shape),
                                                        tuple(case.expected["weights"].shape)))
    mismatch = find_mismatch("weights", after["weights"], before["weights"][..., order], case.tolerance["weights"])
    if mismatch:
        raise CheckFailure("permuting keys did not permute the weights' key axis the same way", tried=case.label,
                           mismatches=[mismatch], hint="weights[..., i, j] is query i's weight on key j.",
                           quiz=lesson("softmax-axis"))
    return "keys and values shuffled together"


def check_append(ctx: CheckContext) -> str:
    case = build(case_sizes((2, 2), 8, 8, 4, 3), {"dtype": F32, "mask": "causal"}, ctx.seed + 110)
    data = case.data
    short = 5
    before = _learner_outputs(ctx, data["q"][..., :short, :], data["k"][..., :short, :], data["v"][..., :short, :],
                              reference.causal_mask(short))["out"]
    after = _learner_outputs(ctx, data["q"], data["k"], data["v"], data["mask"])["out"][..., :short, :]
    _unchanged(ctx, case, before, after, "appending tokens changed the outputs of earlier positions under a "
               "causal mask", "With a causal mask, position i may only see keys 0..i.",
               lesson("masking-causal-diagonal"))
    return "5 tokens, then 3 more appended"


def check_leakage(ctx: CheckContext) -> str:
    case = build(case_sizes((2, 2), 7, 7, 4, 3), {"dtype": F32, "mask": "causal"}, ctx.seed + 120)
    data = case.data
    cut = 3
    before = _learner_outputs(ctx, data["q"], data["k"], data["v"], data["mask"])["out"]
    generator = ctx.generator(121)
    k, v = data["k"].clone(), data["v"].clone()
    k[..., cut:, :] = torch.randn(k[..., cut:, :].shape, generator=generator).to(F32)
    v[..., cut:, :] = torch.randn(v[..., cut:, :].shape, generator=generator).to(F32) * 3
    after = _learner_outputs(ctx, data["q"], k, v, data["mask"])["out"]
    _unchanged(ctx, case, before[..., :cut, :], after[..., :cut, :],
               f"changing future tokens (positions ≥ {cut}) moved the outputs of positions < {cut}: information "
               "leaks from the future", "The causal mask must hide every key after the query's position.",
               lesson("masking-causal-diagonal"))
    return f"keys/values at positions ≥ {cut} perturbed"


def check_empty_row(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, case_sizes((2,), 5, 6, 4, 3), {"dtype": F32, "mask": "empty_row"}, ctx.seed + 130)
    return "other rows correct; the fully masked row is undefined and not compared"


# The real-world use each check stands for.
USAGE = {
    "shapes": "a single head (no leading dims), batched heads (B, H), cross-attention (n ≠ m), d_k ≠ d_v as in "
              "MLA-style value widths, and decoding's one query",
    "values": "the plain forward pass of any transformer layer at float64 precision",
    "mask-causal": "a decoder's training pass (GPT, Llama)",
    "mask-kv-cache": "decoding or chunked prefill: n new queries after m − n cached keys",
    "mask-padding": "a padded batch from a tokenizer: (B, 1, 1, m) key masks",
    "mask-arbitrary": "document masks, prefix-LM and packed sequences: any broadcastable boolean mask",
    "mask-empty-row": "a padded query row that sees no key at all",
    "causal-leakage": "training with teacher forcing: a future token must not move an earlier output",
    "stability": "large logits from unnormalised q and k (no QK-norm), long contexts",
    "dtypes": "inference in float32, bfloat16 and float16, on the input's device",
    "gradients": "training: backward through q, k and v",
    "no-mutation": "a caller that reuses q, k, v afterwards (a KV cache, a residual stream)",
    "deterministic": "inference and evaluation: no dropout or other randomness",
    "noncontiguous": "strided inputs: slices of a wider buffer (a fused QKV projection split in three)",
    "layouts": "transposed and expanded inputs: heads split with .transpose(1, 2), KV heads shared through "
               "GQA's expand() (stride 0)",
    "masked-keys-irrelevant": "padding tokens of any value: masked keys must not matter",
    "key-permutation": "attention is a set operation over keys: their order must not matter",
    "causal-append": "incremental decoding: appending tokens keeps earlier outputs",
}

SPEC = ExerciseSpec(
    name="attention",
    title="Scaled dot-product attention",
    entry_points=(TARGET,),
    lessons=("scaling-why-sqrt-dk", "softmax-axis", "masking-before-softmax", "softmax-max-shift"),
    forbidden=("sdpa", "mha"),
    mask_layout="boolean masks broadcastable to (..., n, m): (n, m), (B, 1, n, m) and (B, 1, 1, m)",
    perf=perf_phase("attention"),
    checks=(
        Check("shapes", "shapes: leading dims, n ≠ m, d_k ≠ d_v, length 1", check_shapes),
        Check("values", "values against the float64 reference", check_values),
        Check("mask-causal", "causal mask", check_mask("causal", case_sizes((2, 2), 6, 6, 8, 4))),
        Check("mask-kv-cache", "causal mask with a KV cache (n < m)", check_kv_cache),
        Check("mask-padding", "padding mask (B, 1, 1, m)", check_mask("padding", case_sizes((3, 2), 5, 7, 8, 4))),
        Check("mask-arbitrary", "arbitrary boolean masks, broadcast", check_arbitrary_masks),
        Check("mask-empty-row", "a row with every key masked", check_empty_row),
        Check("causal-leakage", "causal leakage probe", check_leakage),
        Check("stability", "numerical stability: logits in the hundreds", check_stability),
        Check("dtypes", "dtypes and device: output matches the input", check_dtypes),
        Check("gradients", "gradients with respect to q, k, v", check_gradients),
        Check("no-mutation", "inputs are not modified", check_not_mutated),
        Check("deterministic", "same inputs, same outputs", check_deterministic),
        Check("noncontiguous", "non-contiguous inputs", check_noncontiguous),
        Check("layouts", "transposed inputs and KV heads expanded with stride 0", check_layouts),
        Check("masked-keys-irrelevant", "metamorphic: masked keys do not matter", check_masked_keys_replaced),
        Check("key-permutation", "metamorphic: key order does not matter", check_permutation),
        Check("causal-append", "metamorphic: appending tokens keeps earlier outputs", check_append),
    ),
)
