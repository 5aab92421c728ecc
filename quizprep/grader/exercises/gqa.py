"""Checks for exercises/gqa.py: GroupedQueryAttention(d_model, n_heads, n_kv_heads)(x, mask=None)."""
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
    Case, FunctionProblem, Hypothesis, expect_forward, expect_gradient, expect_no_leak, expect_unchanged, first_output_checks,
    verify,
)
from quizprep.grader.spec import Check, CheckFailure, ExerciseSpec

CLASS = "GroupedQueryAttention"
F32, F64 = torch.float32, torch.float64


def layout_of(sizes: dict[str, int]) -> shared.Layout:
    return shared.Layout(sizes["d_model"], sizes["heads"], sizes["kv_heads"])


def build(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    return shared.build_with_retries(lambda s: _build_once(sizes, variant, s), seed)


def _build_once(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    generator = torch.Generator().manual_seed(seed)
    dtype, layout = variant.get("dtype", F32), layout_of(sizes)
    batch, n = sizes["batch"], sizes["n"]
    x = torch.randn(batch, n, layout.d_model, generator=generator, dtype=F64).to(dtype)
    params = shared.random_params(layout, generator, dtype, variant.get("spread", 1.5))
    mask = reference.causal_mask(n) if variant.get("mask") == "causal" else None
    label = (f"{CLASS}(d_model={layout.d_model}, n_heads={layout.n_heads}, n_kv_heads={layout.n_kv_heads}), "
             f"x {tuple(x.shape)}" + (f", causal mask ({n}, {n})" if mask is not None else "")
             + f", {str(dtype).removeprefix('torch.')}, random weights and biases")
    case = Case(label, dict(sizes), dict(variant),
                {"query": x, "key": x, "value": x, "params": params, "mask": mask, "layout": layout},
                {}, {}, {"out": ("batch", "query", "feature")})
    recompute(case)
    return case


def recompute(case: Case) -> None:
    data, layout = case.data, case.data["layout"]
    out = reference.grouped_query_attention(data["query"], data["params"], layout.n_heads, layout.n_kv_heads,
                                            data["mask"])
    case.expected = {"out": out}
    tolerance = shared.tolerances(data["query"].dtype, data["query"], data["key"], data["params"], layout, out)
    case.tolerance = {"out": tolerance["out"]}


def run(ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
    data, layout = case.data, case.data["layout"]
    kwargs = {"mask": data["mask"]} if data["mask"] is not None else {}
    reply = shared.call_module(ctx, CLASS, (layout.d_model, layout.n_heads, layout.n_kv_heads), case, layout,
                               recompute, (data["query"],), kwargs, options)
    return first_output_checks(reply.value, ("out",), f"{CLASS}.forward")


def shrink(sizes: dict[str, int]) -> list[dict[str, int]]:
    candidates = [{**sizes, key: sizes[key] - 1} for key in ("batch", "n") if sizes[key] > 1]
    return candidates


predict = shared.module_predictor(("out",))


HYPOTHESES = (
    Hypothesis("gqa-repeat", "KV heads expanded with repeat (tiling) instead of repeat_interleave: query head h "
               "reads KV head h % G instead of h // (H / G)",
               "k.repeat_interleave(n_heads // n_kv_heads, dim=1) keeps each group's query heads together.",
               lesson("gqa-head-mapping"), predict(kv_expand="repeat")),
) + shared.attention_hypotheses(predict)


def alternatives(sizes: dict[str, int]) -> list[dict[str, int]]:
    """Other lengths and head widths (d_head ≠ √d_model), the head counts kept, to separate coinciding mistakes."""
    return [{**sizes, "n": n, "d_model": sizes["heads"] * d_head} for n, d_head in ((5, 6), (7, 5))]


PROBLEM = FunctionProblem(HYPOTHESES, build, run, shrink, alternatives)


def check_structure(ctx: CheckContext) -> str:
    layout = shared.Layout(16, 4, 2)
    module = ctx.new_module(CLASS, 16, 4, 2, example=shared.first_inputs(16))
    wrong = layout.wrong_weight(module.parameters)
    if wrong:
        name, shape, found = wrong
        weight = module.parameters.get(f"{name}.weight")
        raise CheckFailure(f"{name}.weight is {found}; expected {shape}", tried=f"{CLASS}(16, 4, 2)",
                           hint="W_k and W_v produce n_kv_heads·d_head features, not d_model.",
                           quiz=lesson("gqa-head-mapping"),
                           named=None if weight is None else shared.kv_full_width(layout, name, tuple(weight.shape)))
    return "W_k, W_v: Linear(16, 8) for 4 query heads sharing 2 KV heads"


def check_grouped(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, {"batch": 2, "n": 5, "d_model": 24, "heads": 4, "kv_heads": 2}, {"dtype": F32}, ctx.seed)
    verify(ctx, PROBLEM, {"batch": 1, "n": 5, "d_model": 24, "heads": 6, "kv_heads": 2}, {"dtype": F32}, ctx.seed + 1)
    return "4 heads / 2 KV heads and 6 / 2"


def check_extremes(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, {"batch": 2, "n": 5, "d_model": 12, "heads": 3, "kv_heads": 3}, {"dtype": F32}, ctx.seed + 2)
    verify(ctx, PROBLEM, {"batch": 2, "n": 5, "d_model": 12, "heads": 4, "kv_heads": 1}, {"dtype": F32}, ctx.seed + 3)
    return "n_kv_heads = n_heads (MHA) and n_kv_heads = 1 (MQA)"


def check_causal(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, {"batch": 2, "n": 7, "d_model": 24, "heads": 4, "kv_heads": 2},
           {"dtype": F32, "mask": "causal"}, ctx.seed + 4)
    return "causal (T, T) mask"


def check_leakage(ctx: CheckContext) -> str:
    sizes = {"batch": 2, "n": 7, "d_model": 24, "heads": 4, "kv_heads": 2}
    case = build(sizes, {"dtype": F32, "mask": "causal"}, ctx.seed + 5)
    expect_no_leak(ctx, PROBLEM, case, shared.perturbed_from(case, 3, ctx.generator(6), recompute),
                   shared.moved_before(3, case.tolerance["out"]),
                   "changing tokens 3–6 moved the outputs of tokens 0–2 under a causal mask",
                   "Apply the mask to every head's scores before the softmax.", lesson("masking-causal-diagonal"))
    return "tokens ≥ 3 perturbed"


def check_dtypes(ctx: CheckContext) -> str:
    for i, dtype in enumerate((F64, torch.bfloat16)):
        case, actual = verify(ctx, PROBLEM, {"batch": 2, "n": 5, "d_model": 24, "heads": 4, "kv_heads": 2},
                              {"dtype": dtype, "mask": "causal"}, ctx.seed + 10 + i)
        expect_dtype_and_device(ctx, "out", actual["out"], dtype, case.label)
    return "fp64, bf16"


def check_gradients(ctx: CheckContext) -> str:
    case = build({"batch": 2, "n": 3, "d_model": 8, "heads": 4, "kv_heads": 2}, {"dtype": F64}, ctx.seed + 20)
    data, layout = case.data, case.data["layout"]
    grad_out = torch.randn(case.expected["out"].shape, generator=ctx.generator(21), dtype=F64)
    reply = shared.call_module(ctx, CLASS, (8, 4, 2), case, layout, recompute, (data["query"],), {},
                               {"requires_grad": True, "grad_output": grad_out})
    expect_forward(ctx, PROBLEM, case, first_output_checks(reply.value, ("out",), f"{CLASS}.forward"))
    if reply.grad_error:
        raise CheckFailure(f"no gradient: {reply.grad_error}", tried=case.label)
    x = data["query"].detach().clone().requires_grad_(True)
    params = {name: p.detach().clone().requires_grad_(True) for name, p in data["params"].items()}
    out = reference.grouped_query_attention(x, params, 4, 2)
    wanted = dict(zip(["x", *params], reference.gradients(out, [x, *params.values()], grad_out)))
    got_by_name = {"x": reply.grads.get("arg0"), **{n: reply.grads.get(f"param:{n}") for n in params}}
    for name, want in wanted.items():
        expect_gradient(name, got_by_name.get(name), want, 10.0, case.label)
    return "x and every projection, float64"


def check_not_mutated(ctx: CheckContext) -> None:
    case = build({"batch": 2, "n": 5, "d_model": 8, "heads": 4, "kv_heads": 2}, {"dtype": F32}, ctx.seed + 30)
    reply = shared.call_module(ctx, CLASS, (8, 4, 2), case, case.data["layout"], recompute, (case.data["query"],),
                               {}, {"return_inputs": True})
    expect_unchanged(reply, (("x", case.data["query"]),), case.label, "Avoid in-place ops on the input.")


# The real-world use each check stands for.
USAGE = {
    "structure": "loading Llama/Mistral checkpoints: W_k and W_v of n_kv_heads·d_head outputs",
    "grouped": "a GQA layer (Llama 2 70B, Llama 3, Mistral) with random weights",
    "mha-and-mqa": "the extremes: multi-head (G = H) and multi-query (G = 1, PaLM, Falcon)",
    "causal": "a decoder's causal pass",
    "causal-leakage": "teacher-forced training: no future token moves an earlier output",
    "dtypes": "inference in float32, bfloat16 and float16",
    "gradients": "training: backward into the input and every weight",
    "no-mutation": "a residual stream reused after the layer",
}

SPEC = ExerciseSpec(
    name="gqa",
    title="Grouped-query attention",
    entry_points=(CLASS,),
    lessons=("gqa-head-mapping", "scaling-why-sqrt-dk", "softmax-axis", "multihead-output-projection",
             "multihead-split-transpose", "masking-before-softmax"),
    forbidden=("sdpa", "mha"),
    mask_layout="a boolean (n, n) causal mask, which broadcasts against the scores (B, n_heads, n, n)",
    checks=(
        Check("structure", "projection shapes for n_kv_heads < n_heads", check_structure),
        Check("grouped", "grouped heads with random weights", check_grouped),
        Check("mha-and-mqa", "n_kv_heads = n_heads and n_kv_heads = 1", check_extremes),
        Check("causal", "causal mask", check_causal),
        Check("causal-leakage", "causal leakage probe", check_leakage),
        Check("dtypes", "dtypes and device", check_dtypes),
        Check("gradients", "gradients for x and weights", check_gradients),
        Check("no-mutation", "the input is not modified", check_not_mutated),
    ),
)
