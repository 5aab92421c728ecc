"""Shared machinery for the nn.Module exercises (multi-head and grouped-query attention).

The grader builds the learner's module, overwrites its projections with random weights and
biases of its own (so a correct module cannot pass by luck of initialisation and the reference
uses exactly the same numbers), then calls it. Hypotheses are whole-module variants built from
:mod:`quizprep.grader.mistakes`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import Tensor

from quizprep.grader import mistakes, reference
from quizprep.grader.compare import Mismatch, Tolerance, find_mismatch
from quizprep.grader.context import CheckContext
from quizprep.grader.lessons import lesson
from quizprep.grader.problem import Case, GeneratorError, Hypothesis, either, reject_shortcuts
from quizprep.grader.spec import CheckFailure, Diagnosis

PROJECTIONS = ("W_q", "W_k", "W_v", "W_o")


@dataclass(frozen=True)
class Layout:
    """Shapes of the four projections: (out_features, in_features) each."""

    d_model: int
    n_heads: int
    n_kv_heads: int

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def weight_shapes(self) -> dict[str, tuple[int, int]]:
        q_width, kv_width = self.n_heads * self.d_head, self.n_kv_heads * self.d_head
        return {"W_q": (q_width, self.d_model), "W_k": (kv_width, self.d_model),
                "W_v": (kv_width, self.d_model), "W_o": (self.d_model, q_width)}

    def wrong_weight(self, parameters: dict[str, Tensor]) -> tuple[str, tuple[int, int], str] | None:
        """The first projection whose weight is missing or misshapen in a learner's module's
        `parameters`: its name, the shape expected, and what was found instead."""
        for name, shape in self.weight_shapes().items():
            weight = parameters.get(f"{name}.weight")
            if weight is None or tuple(weight.shape) != shape:
                return name, shape, "missing" if weight is None else f"shape {tuple(weight.shape)}"
        return None


def kv_full_width(layout: Layout, name: str, found: tuple[int, ...]) -> Diagnosis | None:
    """W_k or W_v kept multi-head attention's width (d_model outputs) in a module with fewer KV heads."""
    kv_width = layout.n_kv_heads * layout.d_head
    if name not in {"W_k", "W_v"} or kv_width == layout.n_heads * layout.d_head or \
            found != (layout.n_heads * layout.d_head, layout.d_model):
        return None
    return Diagnosis("kv-projection-full-width", f"{name} projects to {found[0]} features, one per query head's "
                     f"feature as in multi-head attention; with {layout.n_kv_heads} KV heads it projects to "
                     f"n_kv_heads·d_head = {kv_width}", "Define W_k and W_v as nn.Linear(d_model, n_kv_heads * "
                     "d_head): the smaller K and V are what shrinks the KV cache; each KV head then serves "
                     "n_heads // n_kv_heads query heads.", lesson("gqa-kv-cache-savings"))


def random_params(layout: Layout, generator: torch.Generator, dtype: torch.dtype, spread: float) -> dict[str, Tensor]:
    params = {}
    for name, (rows, cols) in layout.weight_shapes().items():
        gain = spread if name in {"W_q", "W_k"} else 1.0
        params[f"{name}.weight"] = (torch.randn(rows, cols, generator=generator, dtype=torch.float64)
                                    * gain / math.sqrt(cols)).to(dtype)
        params[f"{name}.bias"] = (torch.randn(rows, generator=generator, dtype=torch.float64) * 0.5).to(dtype)
    return params


def fit_to_module(case: Case, parameters: dict[str, Tensor], layout: Layout, recompute: Callable[[Case], None],
                  class_name: str) -> dict[str, Tensor]:
    """Check the learner's projections and return the state to load; drop biases it does not have."""
    for name, shape in layout.weight_shapes().items():
        weight = parameters.get(f"{name}.weight")
        if weight is None:
            raise CheckFailure(f"{class_name} has no parameter {name}.weight: define self.{name} = nn.Linear(...)",
                               tried=case.label, hint="The grader reads W_q, W_k, W_v, W_o by name.")
        if tuple(weight.shape) != shape:
            cause = kv_full_width(layout, name, tuple(weight.shape))
            raise CheckFailure(f"{name}.weight has shape {tuple(weight.shape)}, expected {shape} "
                               f"(nn.Linear({shape[1]}, {shape[0]}))", tried=case.label,
                               hint="" if cause else "nn.Linear(in, out) stores its weight as (out, in).",
                               quiz=lesson("gqa-head-mapping") if layout.n_kv_heads != layout.n_heads
                               else lesson("multihead-split-transpose"), named=cause)
    params = case.data["params"]
    missing = [name for name in params if name.endswith(".bias") and name not in parameters]
    if missing:
        for name in missing:
            del params[name]
        recompute(case)
    return {name: value for name, value in params.items() if name in parameters}


def module_attention(query: Tensor, key: Tensor, value: Tensor, params: dict[str, Tensor], layout: Layout,
                     mask: Tensor | None, *, split: Callable[[Tensor, int], Tensor] = reference.split_heads,
                     merge: Callable[[Tensor], Tensor] = reference.merge_heads, out_projection: bool = True,
                     value_projection: str = "W_v", values_are_keys: bool = False, kv_expand: str = "interleave",
                     transposed_weights: bool = False, value_split: Callable[[Tensor, int], Tensor] | None = None,
                     **attention_mistake: Any) -> tuple[Tensor, Tensor]:
    """Multi-/grouped-query attention in float64 with the given mistakes; `value_split`, when the values
    are split apart from the queries and keys (BERT's transpose_for_scores for q and k only)."""
    if transposed_weights:  # x @ W as GPT-2's Conv1D stores it; only a square weight lets that run at all
        params = {name: value.T if name.endswith(".weight") and value.shape[0] == value.shape[-1] else value
                  for name, value in params.items()}
    q = split(reference.linear(query, params, "W_q"), layout.n_heads)
    k = split(reference.linear(key, params, "W_k"), layout.n_kv_heads)
    v = k if values_are_keys else (value_split or split)(reference.linear(value, params, value_projection),
                                                         layout.n_kv_heads)
    group = layout.n_heads // layout.n_kv_heads
    if group > 1:
        expand = (lambda t: t.repeat_interleave(group, dim=1)) if kv_expand == "interleave" else \
            (lambda t: t.repeat(1, group, 1, 1))
        k, v = expand(k), expand(v)
    if attention_mistake:
        heads, weights = mistakes.attention(q, k, v, mask, **attention_mistake)
    else:
        heads, weights = reference.attention(q, k, v, mask)
    merged = merge(heads)
    out = reference.linear(merged, params, "W_o") if out_projection else merged
    return out, weights


def tolerances(case_dtype: torch.dtype, query: Tensor, key: Tensor, params: dict[str, Tensor], layout: Layout,
               out: Tensor) -> dict[str, Tolerance]:
    q = reference.split_heads(reference.linear(query, params, "W_q"), layout.n_heads)
    k = reference.split_heads(reference.linear(key, params, "W_k"), layout.n_kv_heads)
    k = k.repeat_interleave(layout.n_heads // layout.n_kv_heads, dim=1)
    logit_scale = float((q @ k.transpose(-2, -1)).abs().max()) / math.sqrt(layout.d_head)
    # Projections add rounding proportional to the width they sum over.
    widen = math.sqrt(layout.d_model)
    out_scale = float(out[~torch.isnan(out)].abs().max()) if out.numel() else 1.0
    return {"out": Tolerance.working(case_dtype, logit_scale + widen, out_scale),
            "weights": Tolerance.working(case_dtype, logit_scale + widen)}


def shortcut_guard(case: Case) -> None:
    """Uniform attention (scale 0), zeros and the bare output bias must all fail this case."""
    data, out = case.data, case.expected["out"]
    if data["key"].shape[1] == 1:
        return  # one key: every attention pattern is the same, the other cases carry the check
    uniform, _ = module_attention(data["query"], data["key"], data["value"], data["params"], data["layout"],
                                  data["mask"], scale=0.0)
    shortcuts = {"zeros": torch.zeros_like(out), "uniform attention": uniform}
    bias = data["params"].get("W_o.bias")
    if bias is not None:
        shortcuts["only the output bias"] = bias.double().expand_as(out)
    reject_shortcuts(case, "out", shortcuts)


def attention_hypotheses(predict: Callable[..., Callable[[Case], dict[str, Tensor] | None]]) -> tuple[Hypothesis, ...]:
    """Mistakes shared by every module exercise; `predict(**mistake)` builds the prediction."""
    scaling = lesson("scaling-why-sqrt-dk")
    masking = lesson("masking-before-softmax")
    return (
        Hypothesis("no-scale", "missing the 1/√d_k scaling", "Divide each head's scores by √d_head.", scaling,
                   predict(scale_by="one")),
        Hypothesis("scale-dk", "scores divided by d_k instead of √d_k",
                   "The standard deviation of q·k grows like √d_k.", scaling, predict(scale_by="d_head")),
        Hypothesis("scale-d-model", "scores divided by √d_model instead of √d_head",
                   "Scale by the width of one head: d_model // n_heads.", scaling, predict(scale_by="d_model")),
        Hypothesis("scale-seq-len", "scores divided by √(sequence length) instead of √d_head: d_k was read from "
                   "the length axis (size(-2) or size(1))", "d_k is the last axis of each head's q and k: "
                   "q.size(-1), or d_model // n_heads.", scaling, predict(scale_by="length")),
        Hypothesis("softmax-axis", "softmax taken over the query axis instead of the keys",
                   "softmax(scores, dim=-1): each query's weights over the keys sum to 1.",
                   lesson("softmax-axis"), predict(softmax_dim=-2)),
        Hypothesis("scale-one-side", "scores scaled by d_head^-1/4 only: the factor was applied to q but not "
                   "to k", "Whisper-style code scales q and k by d_head^-1/4 each; scale both, or the scores once "
                   "by 1/√d_head.", scaling, predict(scale_by="quarter")),
        Hypothesis("weight-transposed", "the projections multiply by W, not W.T: x @ W as GPT-2's Conv1D (in, out) "
                   "layout, on nn.Linear's (out, in) weights", "Call the nn.Linear (self.W_q(x)) or multiply by "
                   "W.T: nn.Linear stores (out_features, in_features).", lesson("multihead-output-projection"),
                   predict(transposed_weights=True)),
        Hypothesis("split-no-transpose", "heads split with a reshape but no transpose: (B, T, D) viewed as "
                   "(B, H, T, d) mixes positions across heads",
                   "Reshape to (B, T, H, d) first, then .transpose(1, 2) (and transpose back before merging).",
                   lesson("multihead-split-transpose"),
                   either(predict(split=mistakes.split_no_transpose),
                          predict(split=mistakes.split_no_transpose, merge=mistakes.merge_no_transpose),
                          # one helper splits q and k, v is split inline right (or the reverse)
                          predict(split=mistakes.split_no_transpose, value_split=reference.split_heads),
                          predict(value_split=mistakes.split_no_transpose))),
        Hypothesis("split-interleaved", "head h takes features h, h+H, ... instead of the block [h·d, (h+1)·d)",
                   "view(B, T, H, d): the head index comes before the feature index.",
                   lesson("multihead-split-transpose"),
                   either(predict(split=mistakes.split_interleaved),
                          predict(split=mistakes.split_interleaved, merge=mistakes.merge_interleaved))),
        Hypothesis("merge-interleaved", "heads merged feature-major: (B, H, T, d) permuted to (B, T, d, H) "
                   "before the reshape, so output feature j·H + h comes from head h",
                   "transpose(1, 2) to (B, T, H, d), then .reshape(B, T, D): head h's features stay the block "
                   "[h·d, (h+1)·d) that W_o expects.", lesson("multihead-split-transpose"),
                   predict(merge=mistakes.merge_interleaved)),
        Hypothesis("merge-no-transpose", "heads merged without transposing back: (B, H, T, d) reshaped straight "
                   "to (B, T, D)", "transpose(1, 2) back to (B, T, H, d), then .reshape(B, T, D).",
                   lesson("multihead-split-transpose"), predict(merge=mistakes.merge_no_transpose)),
        Hypothesis("no-output-projection", "the output projection W_o is missing",
                   "Apply self.W_o to the merged heads.", lesson("multihead-output-projection"),
                   predict(out_projection=False)),
        Hypothesis("k-for-v", "the K projection is used for the values (W_k instead of W_v)",
                   "Values go through W_v.", lesson("multihead-output-projection"),
                   either(predict(value_projection="W_k"), predict(values_are_keys=True))),
        Hypothesis("mask-inverted", "mask inverted: attends where the mask is False",
                   "True means 'may attend'.", masking, predict(mask_mode="inverted")),
        Hypothesis("mask-after-softmax", "mask applied after the softmax (not renormalised)",
                   "Mask the scores with -inf before the softmax.", masking, predict(mask_mode="after_softmax")),
        Hypothesis("mask-zero-fill", "masked scores filled with 0 instead of -inf",
                   "exp(0) = 1: masked keys keep weight. Use -inf.", masking, predict(mask_mode="zero_fill")),
        Hypothesis("mask-ignored", "the mask is ignored", "Apply the mask to every head's scores.", masking,
                   predict(mask_mode="ignored")),
    )


def scale_value(scale_by: str, layout: Layout, length: int) -> float:
    return {"one": 1.0, "d_head": 1.0 / layout.d_head, "d_model": 1.0 / math.sqrt(layout.d_model),
            "length": 1.0 / math.sqrt(length), "quarter": layout.d_head ** -0.25}[scale_by]


def translate_mistake(mistake: dict[str, Any], layout: Layout, length: int) -> dict[str, Any]:
    mistake = dict(mistake)
    if "scale_by" in mistake:
        mistake["scale"] = scale_value(mistake.pop("scale_by"), layout, length)
    return mistake


def build_with_retries(build_once: Callable[[int], Case], seed: int) -> Case:
    last = None
    for attempt in range(6):
        case = build_once(seed + 7919 * attempt)
        try:
            shortcut_guard(case)
            return case
        except GeneratorError as error:
            last = error
    raise GeneratorError(str(last))


def call_module(ctx: CheckContext, class_name: str, ctor_args: tuple[int, ...], case: Case, layout: Layout,
                recompute: Callable[[Case], None], call_args: tuple[Tensor, ...], kwargs: dict[str, Any],
                options: dict[str, Any] | None) -> Any:
    module = ctx.new_module(class_name, *ctor_args, example=first_inputs(*(x.shape[-1] for x in call_args)))
    state = fit_to_module(case, module.parameters, layout, recompute, class_name)
    ctx.session.request({"op": "set_state", "handle": module.handle, "state": state, "device": ctx.device,
                         "dtype": str(case.variant.get("dtype", torch.float32)).removeprefix("torch.")})
    return ctx.call_module(module, *call_args, options=options, **kwargs)


def first_inputs(*widths: int) -> tuple[Tensor, ...]:
    """Zeros, a batch of one of two positions, one input per width: what a module with lazy
    parameters is first called on, to make them."""
    return tuple(torch.zeros(1, 2, width) for width in widths)


def module_predictor(outputs: tuple[str, ...]) -> Callable[..., Callable[[Case], dict[str, Tensor] | None]]:
    """`predict(**mistake)` for a module exercise: what a module with that mistake would return,
    limited to the `outputs` the exercise compares."""
    def predict(**mistake: Any) -> Callable[[Case], dict[str, Tensor] | None]:
        def prediction(case: Case) -> dict[str, Tensor] | None:
            data, layout = case.data, case.data["layout"]
            if mistake.get("mask_mode") and data["mask"] is None:
                return None
            out, weights = module_attention(data["query"], data["key"], data["value"], data["params"], layout,
                                            data["mask"], **translate_mistake(mistake, layout,
                                                                              data["query"].shape[1]))
            return {name: value for name, value in (("out", out), ("weights", weights)) if name in outputs}

        return prediction

    return predict


def perturbed_from(case: Case, cut: int, generator: torch.Generator, recompute: Callable[[Case], None]) -> Case:
    """The same self-attention case with tokens from position `cut` on replaced by other values."""
    x = case.data["query"].clone()
    x[:, cut:] = (torch.randn(x[:, cut:].shape, generator=generator) * 3).to(x.dtype)
    altered = Case(case.label, case.sizes, case.variant, {**case.data, "query": x, "key": x, "value": x}, {}, {},
                   case.dims)
    recompute(altered)
    return altered


def moved_before(cut: int, tolerance: Tolerance) -> Callable[[dict[str, Tensor], dict[str, Tensor]], Mismatch | None]:
    """Did the outputs of tokens before `cut` move between two runs?"""
    def leak(before: dict[str, Tensor], after: dict[str, Tensor]) -> Mismatch | None:
        return find_mismatch("out", after["out"][:, :cut], before["out"][:, :cut], tolerance,
                             ("batch", "query", "feature"))

    return leak
