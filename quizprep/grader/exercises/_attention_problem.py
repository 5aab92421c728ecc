"""The attention exercise's Problem: cases of q, k, v and masks with float64 expected outputs, how
to ask the learner for them, how to shrink them, and the classic mistakes (hypotheses) a wrong
output is tested against. The checks that use it are in :mod:`.attention`."""
from __future__ import annotations

import math
from typing import Any, Callable

import torch
from torch import Tensor

from quizprep.grader import mistakes, reference
from quizprep.grader.compare import Tolerance
from quizprep.grader.context import CheckContext
from quizprep.grader.lessons import lesson
from quizprep.grader.problem import (
    Case, FunctionProblem, GeneratorError, Hypothesis, first_output_checks, reject_shortcuts,
)

TARGET = "scaled_dot_product_attention"
LEAD_NAMES = {0: (), 1: ("batch",), 2: ("batch", "head"), 3: ("batch0", "batch", "head")}
LOGIT_VARIANCE = {"mild": 1.0, "peaky": 4.0, "huge": 100.0}  # scaled logits have this standard deviation


def case_sizes(lead: tuple[int, ...], n: int, m: int, dk: int, dv: int) -> dict[str, int]:
    sizes = {f"b{i}": size for i, size in enumerate(lead)}
    sizes.update(n=n, m=m, dk=dk, dv=dv)
    return sizes


def lead_of(sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(sizes[f"b{i}"] for i in range(3) if f"b{i}" in sizes)


def make_mask(kind: str | None, lead: tuple[int, ...], n: int, m: int, generator: torch.Generator) -> Tensor | None:
    if kind is None:
        return None
    if kind == "causal":
        return reference.causal_mask(n, m)
    if kind == "padding":
        batch = lead[0] if lead else 1
        lengths = torch.randint(1, m + 1, (batch,), generator=generator)
        lengths[0] = max(1, m - 2) if m > 1 else 1
        mask = reference.padding_mask(lengths, m)  # (B, 1, 1, m)
        return mask.reshape(batch, *([1] * max(len(lead) - 1, 0)), 1, m) if lead else mask.reshape(1, m)
    shape = (*lead[:1], *([1] * max(len(lead) - 1, 0)), n, m) if kind == "random" else (n, m)
    mask = torch.rand(shape, generator=generator) < 0.65
    rows = torch.arange(n)
    mask[..., rows, torch.randint(0, m, (n,), generator=generator)] = True  # every row sees a key
    if kind == "empty_row":
        mask[..., n // 2, :] = False
    return mask


def build(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    checked = sizes["m"] > 1 and not variant.get("allow_shortcuts")
    return draw_case(_build_once, sizes, variant, seed, _shortcuts if checked else lambda case: {})


def draw_case(build_once: Callable[[dict[str, int], dict[str, Any], int], Case], sizes: dict[str, int],
              variant: dict[str, Any], seed: int, shortcuts: Callable[[Case], dict[str, Tensor]]) -> Case:
    """A case from `build_once` whose output no shortcut would pass, drawn again with other seeds
    until one is (a few tries)."""
    for attempt in range(6):
        case = build_once(sizes, variant, seed + 7919 * attempt)
        try:
            reject_shortcuts(case, "out", shortcuts(case))
            return case
        except GeneratorError:
            continue
    raise GeneratorError(f"could not draw inputs that reject shortcuts for {case.label}")


def _build_once(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    generator = torch.Generator().manual_seed(seed)
    dtype = variant.get("dtype", torch.float32)
    lead, n, m, dk, dv = lead_of(sizes), sizes["n"], sizes["m"], sizes["dk"], sizes["dv"]
    spread = math.sqrt(LOGIT_VARIANCE[variant.get("logits", "mild")])
    q = (torch.randn(*lead, n, dk, generator=generator, dtype=torch.float64) * spread).to(dtype)
    k = (torch.randn(*lead, m, dk, generator=generator, dtype=torch.float64) * spread).to(dtype)
    v = torch.randn(*lead, m, dv, generator=generator, dtype=torch.float64).to(dtype)
    if variant.get("shared_kv_heads") and len(lead) >= 2:  # GQA: one KV head read by every query head
        k, v = (t[:, :1].expand_as(t).clone() for t in (k, v))
    mask = make_mask(variant.get("mask"), lead, n, m, generator)
    return make_case(q, k, v, mask, sizes, variant)


def make_case(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, sizes: dict[str, int],
              variant: dict[str, Any]) -> Case:
    out, weights = reference.attention(q, k, v, mask)
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
    allowed = scores if mask is None else scores.masked_fill(~mask, 0.0)
    logit_scale = float(allowed.abs().max()) if allowed.numel() else 0.0
    dtype = q.dtype
    value_scale = float(v.double().abs().max()) if v.numel() else 1.0
    lead = LEAD_NAMES[q.dim() - 2]
    regions = {}
    if mask is not None:
        regions["weights"] = {"at masked-out keys (should be 0)": ~mask, "at allowed keys": mask}
    mask_label = f", {variant.get('mask')} mask {tuple(mask.shape)}" if mask is not None else ""
    label = (f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}{mask_label}, "
             f"{str(dtype).removeprefix('torch.')}, {variant.get('logits', 'mild')} logits")
    return Case(
        label=label, sizes=dict(sizes), variant=dict(variant),
        data={"q": q, "k": k, "v": v, "mask": mask},
        expected={"out": out, "weights": weights},
        tolerance={"out": Tolerance.working(dtype, logit_scale, value_scale),
                   "weights": Tolerance.working(dtype, logit_scale)},
        dims={"out": (*lead, "query", "feature"), "weights": (*lead, "query", "key")},
        regions=regions,
    )


def _shortcuts(case: Case) -> dict[str, Tensor]:
    v, mask = case.data["v"].double(), case.data["mask"]
    shape = case.expected["out"].shape
    uniform = torch.ones(case.expected["weights"].shape, dtype=torch.float64)
    if mask is not None:
        uniform = uniform * mask
    uniform = uniform / uniform.sum(-1, keepdim=True).clamp_min(1)
    return {
        "zeros": torch.zeros(shape, dtype=torch.float64),
        "mean of V": v.mean(dim=-2, keepdim=True).expand(shape),
        "mean of the visible V rows": uniform @ v,
    }


def run(ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
    data = case.data
    kwargs = {"mask": data["mask"]} if data["mask"] is not None else {}
    reply = ctx.call(TARGET, data["q"], data["k"], data["v"], options=options, **kwargs)
    return first_output_checks(reply.value, ("out", "weights"), TARGET)


def shrink(sizes: dict[str, int]) -> list[dict[str, int]]:
    candidates = []
    lead = lead_of(sizes)
    if lead:
        candidates.append(case_sizes(lead[1:], sizes["n"], sizes["m"], sizes["dk"], sizes["dv"]))
    for key in ("n", "m", "dk", "dv"):
        for smaller in (1, sizes[key] // 2, sizes[key] - 1):
            if 1 <= smaller < sizes[key]:
                candidates.append({**sizes, key: smaller})
    return candidates


def _predict(**mistake: Any):
    def predict(case: Case) -> dict[str, Tensor] | None:
        data = case.data
        needs_mask = mistake.get("mask_mode") not in (None, "fill")
        if needs_mask and data["mask"] is None:
            return None
        if mistake.get("compute_dtype") == "input":
            mistake_here = {**mistake, "compute_dtype": data["q"].dtype}
        else:
            mistake_here = mistake
        # `<argument>_of` computes that argument from the case's data (a scale from d_k, an axis from the rank)
        mistake_here = {key.removesuffix("_of"): value(data) if key.endswith("_of") else value
                        for key, value in mistake_here.items()}
        out, weights = mistakes.attention(data["q"], data["k"], data["v"], data["mask"], **mistake_here)
        return {"out": out, "weights": weights}

    return predict


HYPOTHESES = (
    Hypothesis("no-scale", "missing the 1/√d_k scaling: scores are q·k unscaled",
               "Divide the scores by math.sqrt(d_k) before the softmax.", lesson("scaling-why-sqrt-dk"),
               _predict(scale=1.0)),
    Hypothesis("scale-dk", "scores divided by d_k instead of √d_k",
               "The variance of q·k grows like d_k, so its standard deviation grows like √d_k.",
               lesson("scaling-why-sqrt-dk"), _predict(scale_of=lambda d: 1.0 / d["q"].shape[-1])),
    Hypothesis("scale-dv", "scores divided by √d_v instead of √d_k",
               "Scale by the query/key width d_k = q.shape[-1], not the value width.",
               lesson("scaling-why-sqrt-dk"), _predict(scale_of=lambda d: 1.0 / math.sqrt(d["v"].shape[-1]))),
    Hypothesis("scale-seq-len", "scores divided by √n (the number of queries) instead of √d_k: d_k was read "
               "from the length axis, q.size(-2)", "d_k is the last axis: q.size(-1).",
               lesson("scaling-why-sqrt-dk"), _predict(scale_of=lambda d: 1.0 / math.sqrt(d["q"].shape[-2]))),
    Hypothesis("softmax-axis", "softmax taken over the query axis (dim=-2) instead of the keys (dim=-1)",
               "Each query's weights over the keys must sum to 1: softmax(scores, dim=-1).",
               lesson("softmax-axis"), _predict(softmax_dim=-2)),
    Hypothesis("scale-one-side", "scores scaled by d_k^-1/4 only: the factor was applied to q but not to k",
               "Whisper-style code scales q and k by d_k^-1/4 each, so that their product carries 1/√d_k; "
               "scale both, or the scores once by 1/math.sqrt(d_k).", lesson("scaling-why-sqrt-dk"),
               _predict(scale_of=lambda d: d["q"].shape[-1] ** -0.25)),
    Hypothesis("softmax-all-axes", "the softmax normalises over every element of the array, not each query's "
               "keys: SciPy's softmax with its default axis=None", "Pass the key axis: softmax(scores, axis=-1); "
               "scipy.special.softmax normalises over all elements when axis is None.", lesson("softmax-axis"),
               _predict(softmax_dim_of=lambda d: tuple(range(d["q"].dim())))),
    Hypothesis("mask-inverted", "mask inverted: attends where the mask is False",
               "True means 'may attend': fill the scores where the mask is False (~mask).",
               lesson("masking-before-softmax"), _predict(mask_mode="inverted")),
    Hypothesis("mask-after-softmax", "mask applied after the softmax (weights zeroed, not renormalised)",
               "Mask the scores with -inf before the softmax so the remaining weights still sum to 1.",
               lesson("masking-before-softmax"), _predict(mask_mode="after_softmax")),
    Hypothesis("mask-zero-fill", "masked scores filled with 0 instead of -inf",
               "exp(0) = 1 still gives masked keys weight; fill with -inf (or a large negative number).",
               lesson("masking-before-softmax"), _predict(mask_mode="zero_fill")),
    Hypothesis("mask-ignored", "the mask is ignored",
               "Apply the mask to the scores: scores.masked_fill(~mask, float('-inf')).",
               lesson("masking-before-softmax"), _predict(mask_mode="ignored")),
    Hypothesis("no-max-shift", "softmax without subtracting the row maximum: exp overflows to inf and NaN",
               "Subtract scores.amax(dim=-1, keepdim=True) before exp; softmax is unchanged by the shift.",
               lesson("softmax-max-shift"), _predict(shift=False, compute_dtype="input"), nonfinite_must_match=True),
)


def alternatives(sizes: dict[str, int]) -> list[dict[str, int]]:
    """Larger cases whose sizes are pairwise distinct, to tell apart mistakes that coincide on a small one."""
    return [case_sizes(lead_of(sizes), n, m, dk, dv) for n, m, dk, dv in ((5, 9, 7, 3), (11, 6, 13, 4))]


PROBLEM = FunctionProblem(HYPOTHESES, build, run, shrink, alternatives)
