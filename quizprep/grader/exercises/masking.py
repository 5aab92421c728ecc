"""Checks for exercises/masking.py: causal_mask(n, m=None) and padding_mask(lengths, max_len)."""
from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from quizprep.grader import mistakes, reference
from quizprep.grader.compare import Tolerance
from quizprep.grader.context import CheckContext
from quizprep.grader.lessons import lesson
from quizprep.grader.problem import Case, Hypothesis, expect_unchanged, first_output_checks, no_alternatives, verify
from quizprep.grader.spec import Check, CheckFailure, ExerciseSpec

EXACT = Tolerance(0.25)  # booleans compared as 0/1: a flipped entry differs by 1, even with slack


def _bool_case(label: str, sizes: dict[str, int], variant: dict[str, Any], data: dict[str, Any], mask: Tensor,
               dims: tuple[str, ...]) -> Case:
    return Case(label, dict(sizes), dict(variant), data, {"mask": mask}, {"mask": EXACT}, {"mask": dims})


class CausalProblem:
    def build(self, sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
        n, m = sizes["n"], sizes.get("m")
        label = f"causal_mask({n})" if m is None else f"causal_mask({n}, {m})"
        return _bool_case(label, sizes, variant, {"n": n, "m": m}, reference.causal_mask(n, m), ("query", "key"))

    def run(self, ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
        args = (case.data["n"],) if case.data["m"] is None else (case.data["n"], case.data["m"])
        result = first_output_checks(ctx.call("causal_mask", *args, options=options).value, ("mask",), "causal_mask")
        return _as_bool(result, case.label)

    def shrink(self, sizes: dict[str, int]) -> list[dict[str, int]]:
        smaller = []
        if sizes["n"] > 1:
            smaller.append({**sizes, "n": sizes["n"] - 1})
        if sizes.get("m") is not None and sizes["m"] > sizes["n"]:
            smaller.append({**sizes, "m": sizes["m"] - 1})
        return smaller

    alternatives = staticmethod(no_alternatives)

    hypotheses = (
        Hypothesis("causal-no-diagonal", "the causal mask hides the diagonal: a token cannot attend to itself",
                   "Use keys <= query position (torch.tril with diagonal=0), not strictly less.",
                   lesson("masking-causal-diagonal"),
                   lambda case: {"mask": mistakes.causal_no_diagonal(case.data["n"], case.data["m"])}),
        Hypothesis("causal-no-offset", "the KV-cache offset is ignored: queries are treated as positions 0..n-1 "
                   "instead of the last n of m", "Query i sits at position m - n + i: tril(..., diagonal=m - n).",
                   lesson("masking-kv-cache-offset"),
                   lambda case: {"mask": mistakes.causal_no_offset(case.data["n"], case.data["m"])}),
        Hypothesis("causal-inverted", "the causal mask is inverted: True marks the future (what to hide)",
                   "In this contract True means 'may attend'. Flip it with ~mask.",
                   lesson("masking-causal-diagonal"),
                   lambda case: {"mask": ~reference.causal_mask(case.data["n"], case.data["m"])}),
        Hypothesis("causal-upper", "the mask lets each query see the future and the present (triu, not tril)",
                   "Keep keys at or before the query: torch.tril, not torch.triu.",
                   lesson("masking-causal-diagonal"),
                   lambda case: {"mask": ~mistakes.causal_no_diagonal(case.data["n"], case.data["m"])}),
    )


class PaddingProblem:
    def build(self, sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
        generator = torch.Generator().manual_seed(seed)
        batch, max_len = sizes["batch"], sizes["max_len"]
        if variant.get("all_short"):  # a batch padded to a fixed width: every sequence is shorter
            lengths = torch.randint(1, max_len, (batch,), generator=generator)
        else:
            lengths = torch.randint(0, max_len + 1, (batch,), generator=generator)
            lengths[0] = max_len
        if batch > 1:
            lengths[1] = max(1, max_len // 2)
        return _bool_case(f"padding_mask(lengths={lengths.tolist()}, max_len={max_len})", sizes, variant,
                          {"lengths": lengths, "max_len": max_len}, reference.padding_mask(lengths, max_len),
                          ("batch", "head", "query", "key"))

    def run(self, ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
        reply = ctx.call("padding_mask", case.data["lengths"], case.data["max_len"], options=options)
        return _as_bool(first_output_checks(reply.value, ("mask",), "padding_mask"), case.label)

    def shrink(self, sizes: dict[str, int]) -> list[dict[str, int]]:
        return [{**sizes, key: sizes[key] - 1} for key in ("batch", "max_len") if sizes[key] > 2]

    alternatives = staticmethod(no_alternatives)

    hypotheses = (
        Hypothesis("padding-on-queries", "the padding mask is laid out over queries (B, 1, max_len, 1), not keys",
                   "Padding hides keys: shape (B, 1, 1, max_len) so it broadcasts along the query axis.",
                   lesson("masking-padding-keys"),
                   lambda case: {"mask": reference.padding_mask(case.data["lengths"], case.data["max_len"])
                                 .transpose(-1, -2)}),
        Hypothesis("padding-inverted", "the padding mask is inverted: True marks padding",
                   "True means 'may attend': positions < length are True.", lesson("masking-padding-keys"),
                   lambda case: {"mask": ~reference.padding_mask(case.data["lengths"], case.data["max_len"])}),
        Hypothesis("padding-off-by-one", "positions equal to the length are kept (<= instead of <)",
                   "A sequence of length L occupies positions 0..L-1.", lesson("masking-padding-keys"),
                   lambda case: {"mask": reference.padding_mask(case.data["lengths"] + 1, case.data["max_len"])}),
        Hypothesis("padding-flat", "the mask has shape (B, max_len) without the broadcast dimensions",
                   "Return (B, 1, 1, max_len) so it broadcasts against scores (B, H, n, m).",
                   lesson("masking-padding-keys"),
                   lambda case: {"mask": reference.padding_mask(case.data["lengths"], case.data["max_len"])
                                 .reshape(len(case.data["lengths"]), -1)}),
        Hypothesis("padding-width-from-lengths", "the mask is as wide as the longest given length, not max_len",
                   "Build positions with torch.arange(max_len): a batch padded to a fixed width (static shapes, "
                   "pad_to_multiple_of) has every sequence shorter than max_len.", lesson("masking-padding-keys"),
                   lambda case: {"mask": reference.padding_mask(case.data["lengths"],
                                                                int(case.data["lengths"].max()))}),
    )


def _as_bool(result: dict[str, Tensor], label: str) -> dict[str, Tensor]:
    mask = result["mask"]
    if mask.dtype != torch.bool:
        raise CheckFailure(f"the mask has dtype {str(mask.dtype).removeprefix('torch.')}; it must be torch.bool",
                           tried=label, hint="Compare positions (a < b) to get booleans; masked_fill needs bool.",
                           quiz=lesson("masking-before-softmax"))
    return result


CAUSAL, PADDING = CausalProblem(), PaddingProblem()


def check_causal_square(ctx: CheckContext) -> str:
    sizes = (5, 8, 2, 1, ctx.draw(1, 17, 70))
    for n in sizes:
        verify(ctx, CAUSAL, {"n": n}, {})
    return f"n = {', '.join(map(str, sizes))} with m omitted"


def check_causal_cache(ctx: CheckContext) -> str:
    rows = ctx.draw(2, 3, 30)
    pairs = ((1, 6), (3, 7), (4, 4), (2, 9), (rows, rows + ctx.draw(3, 17, 60)))
    for n, m in pairs:
        verify(ctx, CAUSAL, {"n": n, "m": m}, {})
    return ", ".join(f"({n}, {m})" for n, m in pairs)


def check_padding(ctx: CheckContext) -> str:
    for i, (batch, max_len) in enumerate(((4, 6), (3, 9), (1, 5))):
        verify(ctx, PADDING, {"batch": batch, "max_len": max_len}, {}, seed=ctx.seed + i)
    return "lengths from 0 to max_len"


def check_padding_fixed_width(ctx: CheckContext) -> str:
    for i, (batch, max_len) in enumerate(((3, 8), (1, 6))):
        verify(ctx, PADDING, {"batch": batch, "max_len": max_len}, {"all_short": True}, seed=ctx.seed + 7 + i)
    return "every length below max_len"


def check_padding_device_and_inputs(ctx: CheckContext) -> str:
    case = PADDING.build({"batch": 3, "max_len": 5}, {}, ctx.seed)
    reply = ctx.call("padding_mask", case.data["lengths"], case.data["max_len"], options={"return_inputs": True})
    mask = first_output_checks(reply.value, ("mask",), "padding_mask")["mask"]
    device = getattr(mask, "quizprep_device", "cpu")
    if device.split(":")[0] != ctx.device.split(":")[0]:
        raise CheckFailure(f"the mask came back on {device} for lengths on {ctx.device}", tried=case.label,
                           hint="Build positions with torch.arange(max_len, device=lengths.device).")
    expect_unchanged(reply, (("lengths", case.data["lengths"]),), case.label,
                     "Avoid in-place operations on the inputs.")
    return "mask on the lengths' device; lengths untouched"


def check_masks_in_attention(ctx: CheckContext) -> str:
    """The learner's masks, used by the reference attention, give the reference's outputs."""
    verify(ctx, CAUSAL, {"n": 4}, {}, ctx.seed)  # a wrong mask is named here, not just "differs" below
    verify(ctx, PADDING, {"batch": 2, "max_len": 4}, {}, ctx.seed)
    generator = ctx.generator(5)
    q, k, v = (torch.randn(2, 2, 4, 6, generator=generator, dtype=torch.float64) for _ in range(3))
    lengths = torch.tensor([4, 2])
    causal = CAUSAL.run(ctx, CAUSAL.build({"n": 4}, {}, 0))["mask"]
    padding = PADDING.run(ctx, _bool_case("", {}, {}, {"lengths": lengths, "max_len": 4},
                                          reference.padding_mask(lengths, 4), ()))["mask"]
    try:
        combined = causal & padding
        got, _ = reference.attention(q, k, v, combined)
    except RuntimeError as error:
        raise CheckFailure(f"the masks do not broadcast against scores (B, H, n, m): {error}",
                           hint="causal (n, m) and padding (B, 1, 1, m) combine with &.",
                           quiz=lesson("masking-padding-keys")) from None
    want, _ = reference.attention(q, k, v, reference.causal_mask(4) & reference.padding_mask(lengths, 4))
    if not torch.allclose(got.nan_to_num(0), want.nan_to_num(0)):
        raise CheckFailure("attention with causal_mask(4) & padding_mask differs from the reference",
                           hint="Check both masks separately above.")
    return "causal & padding broadcast to (2, 2, 4, 4)"


# The real-world use each check stands for.
USAGE = {
    "causal-square": "a decoder's training pass or prefill: n queries over their own n positions",
    "causal-kv-cache": "decoding and chunked prefill with a KV cache: n new queries after m − n cached keys",
    "padding": "a tokenizer batch padded to its longest sequence (padding='longest')",
    "padding-fixed-width": "a batch padded to a fixed width (padding='max_length', pad_to_multiple_of, static "
                           "shapes for torch.compile or TPUs): no sequence fills the width",
    "padding-device": "lengths that live on the GPU with the batch; a collate function reusing its tensors",
    "combined": "an encoder-decoder's causal & padding masks broadcast against (B, H, n, m) scores",
}

SPEC = ExerciseSpec(
    name="masking",
    title="Causal and padding masks",
    entry_points=("causal_mask", "padding_mask"),
    lessons=("masking-causal-diagonal", "masking-kv-cache-offset", "masking-padding-keys"),
    checks=(
        Check("causal-square", "causal_mask(n): lower triangle with the diagonal", check_causal_square),
        Check("causal-kv-cache", "causal_mask(n, m): the last n of m positions", check_causal_cache),
        Check("padding", "padding_mask: (B, 1, 1, max_len), True inside each sequence", check_padding),
        Check("padding-fixed-width", "padding_mask: every sequence shorter than max_len",
              check_padding_fixed_width),
        Check("padding-device", "padding_mask: device and inputs", check_padding_device_and_inputs),
        Check("combined", "both masks combine and broadcast in attention", check_masks_in_attention),
    ),
)
