"""Checks for exercises/mha.py: MultiHeadAttention(d_model, n_heads)(query, key, value, mask=None)."""
from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from quizprep.grader import reference
from quizprep.grader.context import CheckContext
from quizprep.grader.exercises import _modules as shared
from quizprep.grader.exercises.attention import expect_dtype_and_device
from quizprep.grader.lessons import lesson
from quizprep.grader.problem import (
    Case, FunctionProblem, Hypothesis, expect_deterministic, expect_forward, expect_gradient, expect_no_leak, expect_unchanged,
    first_output_checks, verify,
)
from quizprep.grader.spec import Check, CheckFailure, ExerciseSpec

CLASS = "MultiHeadAttention"
F32, F64 = torch.float32, torch.float64


def layout_of(sizes: dict[str, int]) -> shared.Layout:
    return shared.Layout(sizes["d_model"], sizes["heads"], sizes["heads"])


def _mask(kind: str | None, batch: int, n: int, m: int, generator: torch.Generator) -> Tensor | None:
    if kind is None:
        return None
    if kind == "causal":
        return reference.causal_mask(n, m)
    lengths = torch.randint(1, m + 1, (batch,), generator=generator)
    lengths[0] = max(1, m - 2)
    return reference.padding_mask(lengths, m)


def build(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    return shared.build_with_retries(lambda s: _build_once(sizes, variant, s), seed)


def _build_once(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    generator = torch.Generator().manual_seed(seed)
    dtype, layout = variant.get("dtype", F32), layout_of(sizes)
    batch, n, m = sizes["batch"], sizes["n"], sizes.get("m", sizes["n"])
    query = torch.randn(batch, n, layout.d_model, generator=generator, dtype=F64).to(dtype)
    cross = variant.get("cross", False)
    key = torch.randn(batch, m, layout.d_model, generator=generator, dtype=F64).to(dtype) if cross else query
    value = torch.randn(batch, m, layout.d_model, generator=generator, dtype=F64).to(dtype) if cross else query
    params = shared.random_params(layout, generator, dtype, variant.get("spread", 1.5))
    mask = _mask(variant.get("mask"), batch, n, m if cross else n, generator)
    kind = "cross-attention" if cross else "self-attention"
    label = (f"{CLASS}(d_model={layout.d_model}, n_heads={layout.n_heads}), {kind}, query {tuple(query.shape)}, "
             f"key/value {tuple(key.shape)}"
             + (f", {variant['mask']} mask {tuple(mask.shape)}" if mask is not None else "")
             + f", {str(dtype).removeprefix('torch.')}, random weights and biases")
    case = Case(label, dict(sizes), dict(variant),
                {"query": query, "key": key, "value": value, "params": params, "mask": mask, "layout": layout},
                {}, {}, {"out": ("batch", "query", "feature"), "weights": ("batch", "head", "query", "key")})
    recompute(case)
    return case


def recompute(case: Case) -> None:
    data = case.data
    out, weights = reference.multi_head_attention(data["query"], data["key"], data["value"], data["params"],
                                                  data["layout"].n_heads, data["mask"])
    case.expected = {"out": out, "weights": weights}
    case.tolerance = shared.tolerances(data["query"].dtype, data["query"], data["key"], data["params"],
                                       data["layout"], out)
    if data["mask"] is not None:
        case.regions = {"weights": {"at masked-out keys (should be 0)": ~data["mask"], "at allowed keys": data["mask"]}}


def run(ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
    data, layout = case.data, case.data["layout"]
    kwargs = {"mask": data["mask"]} if data["mask"] is not None else {}
    reply = shared.call_module(ctx, CLASS, (layout.d_model, layout.n_heads), case, layout, recompute,
                               (data["query"], data["key"], data["value"]), kwargs, options)
    return first_output_checks(reply.value, ("out", "weights"), f"{CLASS}.forward")


def shrink(sizes: dict[str, int]) -> list[dict[str, int]]:
    candidates = []
    for key in ("batch", "n", "m"):
        if key in sizes and sizes[key] > 1:
            candidates.append({**sizes, key: sizes[key] - 1 if key != "batch" else 1})
    if sizes["heads"] > 2:
        d_head = sizes["d_model"] // sizes["heads"]
        candidates.append({**sizes, "heads": 2, "d_model": 2 * d_head})
    return candidates


predict = shared.module_predictor(("out", "weights"))


def _self_attention_only(case: Case) -> dict[str, Tensor] | None:
    data = case.data
    if data["key"] is data["query"]:
        return None
    out, weights = reference.multi_head_attention(data["query"], data["query"], data["query"], data["params"],
                                                  data["layout"].n_heads, data["mask"] if data["mask"] is None or
                                                  data["mask"].shape[-1] == data["query"].shape[1] else None)
    return {"out": out, "weights": weights}


def _mask_heads_tiled(case: Case) -> dict[str, Tensor] | None:
    """Heads folded into the batch as b·H + h, the mask spread over them with .repeat(H, 1, 1): row
    b·H + h reads sample (b·H + h) mod B's mask."""
    data = case.data
    batch, n, m, heads = data["query"].shape[0], data["query"].shape[1], data["key"].shape[1], data["layout"].n_heads
    if data["mask"] is None or batch == 1:
        return None
    full = torch.broadcast_to(data["mask"], (batch, 1, n, m))[:, 0]
    tiled = full[(torch.arange(batch)[:, None] * heads + torch.arange(heads)) % batch]
    out, weights = reference.multi_head_attention(data["query"], data["key"], data["value"], data["params"], heads,
                                                  tiled)
    return {"out": out, "weights": weights}


HYPOTHESES = shared.attention_hypotheses(predict) + (
    Hypothesis("mask-heads-tiled", "the mask is spread over the heads with .repeat, which tiles the batch "
               "([M0, M1, M0, M1]) while the scores are laid out b·H + h: heads read another sample's mask",
               "Use mask.repeat_interleave(n_heads, dim=0) for a (B·H, n, m) layout, or keep the heads as an axis "
               "and let (B, 1, n, m) broadcast.", lesson("masking-padding-keys"), _mask_heads_tiled),
    Hypothesis("kv-ignored", "key and value are ignored: the module attends over `query` only (self-attention)",
               "Project `key` with W_k and `value` with W_v; they may come from another sequence.",
               lesson("multihead-output-projection"), _self_attention_only),
)


def alternatives(sizes: dict[str, int]) -> list[dict[str, int]]:
    """Other sizes, pairwise distinct and with d_head ≠ √d_model, to separate coinciding mistakes."""
    cross = {"m": 7} if "m" in sizes else {}
    return [{**sizes, "n": 5, "d_model": 18, "heads": 3, **cross}, {**sizes, "n": 6, "d_model": 20, "heads": 4}]


PROBLEM = FunctionProblem(HYPOTHESES, build, run, shrink, alternatives)


def check_structure(ctx: CheckContext) -> str:
    module = ctx.new_module(CLASS, 12, 3, example=shared.first_inputs(12, 12, 12))
    layout = shared.Layout(12, 3, 3)
    wrong = layout.wrong_weight(module.parameters)
    if wrong:
        name, shape, found = wrong
        raise CheckFailure(f"{name}.weight is {found}; expected nn.Linear(12, 12) with weight {shape}",
                           tried=f"{CLASS}(12, 3)", hint="Name the projections W_q, W_k, W_v, W_o.")
    return "W_q, W_k, W_v, W_o are Linear(d_model, d_model)"


def check_self(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, {"batch": 2, "n": 5, "d_model": 12, "heads": 3}, {"dtype": F32}, ctx.seed)
    return "(2, 5, 12), 3 heads"


def check_cross(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, {"batch": 2, "n": 3, "m": 7, "d_model": 10, "heads": 2}, {"dtype": F32, "cross": True},
           ctx.seed + 1)
    return "query (2, 3, 10), distinct key and value (2, 7, 10)"


def check_masks(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, {"batch": 2, "n": 5, "d_model": 12, "heads": 3}, {"dtype": F32, "mask": "causal"},
           ctx.seed + 2)
    verify(ctx, PROBLEM, {"batch": 3, "n": 3, "m": 6, "d_model": 10, "heads": 2},
           {"dtype": F32, "mask": "padding", "cross": True}, ctx.seed + 3)
    return "causal (n, n) and padding (B, 1, 1, m)"


def check_shapes(ctx: CheckContext) -> str:
    for i, (d_model, heads, n) in enumerate(((20, 4, 3), (6, 1, 4), (10, 5, 1))):
        verify(ctx, PROBLEM, {"batch": 1 + i % 2, "n": n, "d_model": d_model, "heads": heads}, {"dtype": F64},
               ctx.seed + 4 + i)
    return "20/4 heads, one head, length 1"


def check_leakage(ctx: CheckContext) -> str:
    case = build({"batch": 2, "n": 6, "d_model": 8, "heads": 2}, {"dtype": F32, "mask": "causal"}, ctx.seed + 10)
    expect_no_leak(ctx, PROBLEM, case, shared.perturbed_from(case, 3, ctx.generator(11), recompute),
                   shared.moved_before(3, case.tolerance["out"]),
                   "changing tokens 3–5 moved the outputs of tokens 0–2 under a causal mask",
                   "Apply the mask to every head's scores before the softmax.", lesson("masking-causal-diagonal"))
    return "tokens ≥ 3 perturbed"


def check_dtypes(ctx: CheckContext) -> str:
    for i, dtype in enumerate((F64, F32, torch.bfloat16)):
        case, actual = verify(ctx, PROBLEM, {"batch": 2, "n": 5, "d_model": 8, "heads": 2},
                              {"dtype": dtype, "mask": "causal"}, ctx.seed + 20 + i)
        for name, tensor in actual.items():
            expect_dtype_and_device(ctx, name, tensor, dtype, case.label)
    return "fp64, fp32, bf16 (module cast with .to(dtype))"


def check_gradients(ctx: CheckContext) -> str:
    case = build({"batch": 2, "n": 4, "m": 5, "d_model": 6, "heads": 2}, {"dtype": F64, "cross": True}, ctx.seed + 30)
    data = case.data
    grad_out = torch.randn(case.expected["out"].shape, generator=ctx.generator(31), dtype=F64)
    reply = shared.call_module(ctx, CLASS, (6, 2), case, data["layout"], recompute,
                               (data["query"], data["key"], data["value"]), {},
                               {"requires_grad": True, "grad_output": grad_out, "grad_path": [0]})
    actual = first_output_checks(reply.value, ("out", "weights"), f"{CLASS}.forward")
    expect_forward(ctx, PROBLEM, case, actual)
    if reply.grad_error:
        raise CheckFailure(f"no gradient: {reply.grad_error}", tried=case.label)
    names = ("query", "key", "value")
    leaves = {name: data[name].detach().clone().requires_grad_(True) for name in names}
    params = {name: p.detach().clone().requires_grad_(True) for name, p in data["params"].items()}
    out, _ = reference.multi_head_attention(leaves["query"], leaves["key"], leaves["value"], params, 2)
    wanted = dict(zip([*names, *params], reference.gradients(out, [*leaves.values(), *params.values()], grad_out)))
    got_by_name = {names[i]: reply.grads.get(f"arg{i}") for i in range(3)}
    got_by_name.update({name: reply.grads.get(f"param:{name}") for name in params})
    for name, want in wanted.items():
        expect_gradient(name, got_by_name.get(name), want, 10.0, case.label)
    return "query, key, value and every projection, float64"


def check_not_mutated(ctx: CheckContext) -> None:
    case = build({"batch": 2, "n": 5, "d_model": 8, "heads": 2}, {"dtype": F32, "mask": "causal"}, ctx.seed + 50)
    data, layout = case.data, case.data["layout"]
    reply = shared.call_module(ctx, CLASS, (layout.d_model, layout.n_heads), case, layout, recompute,
                               (data["query"], data["key"], data["value"]), {"mask": data["mask"]},
                               {"return_inputs": True})
    expect_unchanged(reply, tuple((name, data[name]) for name in ("query", "key", "value")), case.label,
                     "Avoid in-place ops (x.mul_(), x -= ..., mask.logical_not_()) on the inputs.",
                     kwargs=(("mask", data["mask"]),))


def check_deterministic(ctx: CheckContext) -> None:
    case = build({"batch": 2, "n": 5, "d_model": 8, "heads": 2}, {"dtype": F32, "mask": "causal"}, ctx.seed + 40)
    expect_deterministic(ctx, PROBLEM, case)


# The real-world use each check stands for.
USAGE = {
    "structure": "loading a checkpoint: four nn.Linear(d_model, d_model) projections by name",
    "self-attention": "an encoder or decoder layer's self-attention",
    "cross-attention": "an encoder-decoder's cross-attention (T5, Whisper): key/value from another sequence",
    "masks": "causal decoding and padded batches through the module's mask argument",
    "shapes": "other head counts and lengths, one token included",
    "causal-leakage": "teacher-forced training: no future token moves an earlier output",
    "dtypes": "inference in float32, bfloat16 and float16",
    "gradients": "training: backward into the inputs and every weight",
    "no-mutation": "a residual stream reused after the layer",
    "deterministic": "evaluation mode: dropout off",
}

SPEC = ExerciseSpec(
    name="mha",
    title="Multi-head attention",
    entry_points=(CLASS,),
    lessons=("scaling-why-sqrt-dk", "softmax-axis", "multihead-output-projection", "multihead-split-transpose",
             "masking-before-softmax", "masking-padding-keys"),
    forbidden=("sdpa", "mha"),
    mask_layout="boolean masks of shape (n, m) (causal) or (B, 1, 1, m) (padding), which broadcast against "
                "the scores (B, n_heads, n, m)",
    checks=(
        Check("structure", "W_q, W_k, W_v, W_o are Linear(d_model, d_model)", check_structure),
        Check("self-attention", "self-attention with random weights", check_self),
        Check("cross-attention", "cross-attention: key/value from another sequence", check_cross),
        Check("masks", "causal and padding masks", check_masks),
        Check("shapes", "head counts and lengths", check_shapes),
        Check("causal-leakage", "causal leakage probe", check_leakage),
        Check("dtypes", "dtypes and device", check_dtypes),
        Check("gradients", "gradients for inputs and weights", check_gradients),
        Check("no-mutation", "inputs are not modified", check_not_mutated),
        Check("deterministic", "same inputs, same outputs", check_deterministic),
    ),
)
