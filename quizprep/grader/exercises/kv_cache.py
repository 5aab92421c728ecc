"""Checks for exercises/kv_cache.py: a KV cache and the decode step of a causal GQA layer.

    append_kv(cache_k, cache_v, k, v) -> (cache_k, cache_v)
    decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads) -> (out, cache_k, cache_v)

The grader plays the generation loop: it feeds the tokens in chunks (a prompt, then one token
per step), hands each call the cache the previous call returned, and compares the outputs with
one full causal forward pass over all the tokens. The cache is checked for its growth, its
contents (the K and V projections of every token so far, G heads) and its bytes per token,
which must be `quizprep budget`'s figure for one layer.
"""
from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

import torch
from torch import Tensor

from quizprep import budget
from quizprep.grader import reference
from quizprep.grader.compare import Tolerance, find_mismatch
from quizprep.grader.context import CheckContext
from quizprep.grader.exercises._kv_mistakes import HYPOTHESES, PREPENDED, expected_cache, prepended
from quizprep.grader.crashes import BROADCAST, KV_CACHE_EXPANDED_HINT, operands_of, source_of
from quizprep.grader.lessons import lesson
from quizprep.grader.problem import (
    Case, FunctionProblem, failure_for, first_output_checks, mismatches, verify,
)
from quizprep.grader.spec import Check, CheckFailure, Diagnosis, ExerciseSpec

F32, F64 = torch.float32, torch.float64
APPEND, STEP = "append_kv", "decode_step"
WEIGHTS = ("W_q", "W_k", "W_v", "W_o")


def _chunks(tokens: int, prompt: int, step: int = 1) -> list[tuple[int, int]]:
    """A prompt, then calls of `step` tokens (chunked prefill, speculative verification); the last
    call takes what is left."""
    return [(0, prompt)] + [(position, min(position + step, tokens)) for position in range(prompt, tokens, step)]


def build(sizes: dict[str, int], variant: dict[str, Any], seed: int) -> Case:
    generator = torch.Generator().manual_seed(seed)
    dtype = variant.get("dtype", F32)
    batch, heads, kv_heads, d, tokens = (sizes[key] for key in ("batch", "heads", "kv_heads", "d", "tokens"))
    width = heads * d
    x = torch.randn(batch, tokens, width, generator=generator, dtype=F64).to(dtype)
    shapes = {"W_q": (heads * d, width), "W_k": (kv_heads * d, width), "W_v": (kv_heads * d, width),
              "W_o": (width, heads * d)}
    weights = {name: (torch.randn(*shape, generator=generator, dtype=F64) * 1.5 / math.sqrt(shape[1])).to(dtype)
               for name, shape in shapes.items()}
    params = {f"{name}.weight": weight for name, weight in weights.items()}
    out = reference.grouped_query_attention(x, params, heads, kv_heads, reference.causal_mask(tokens))
    cache = {name: reference.split_heads(reference.linear(x, params, name), kv_heads) for name in ("W_k", "W_v")}
    q = reference.split_heads(reference.linear(x, params, "W_q"), heads)
    logits = q @ cache["W_k"].repeat_interleave(heads // kv_heads, dim=1).transpose(-2, -1) / math.sqrt(d)
    logit_scale = float(logits.abs().max()) + math.sqrt(width)
    step = sizes.get("step", 1)
    chunks = _chunks(tokens, sizes["prompt"], step)
    after = f"{tokens - sizes['prompt']} single tokens" if step == 1 else \
        f"calls of {step} tokens on the filled cache ({', '.join(str(b - a) for a, b in chunks[1:])})"
    label = (f"B={batch}, H={heads}, G={kv_heads}, d_head={d}, a prompt of {sizes['prompt']} then "
             f"{after}, {str(dtype).removeprefix('torch.')}")
    if variant.get("handed"):  # the prompt's cache comes from the grader: the later calls' outputs are the learner's
        out = out[:, sizes["prompt"]:]
        label += "; the prompt's cache handed in by the grader"
    return Case(label=label, sizes=dict(sizes), variant=dict(variant),
                data={"x": x, "weights": weights, "params": params, "chunks": chunks},
                expected={"out": out},
                tolerance={"out": Tolerance.working(dtype, logit_scale, float(out.abs().max()))},
                dims={"out": ("batch", "query", "feature")})


def generate(ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> list[dict[str, Tensor]]:
    """Every call's (out, cache_k, cache_v), each call handed the cache the previous one returned."""
    data = case.data
    batch, kv_heads, d = case.sizes["batch"], case.sizes["kv_heads"], case.sizes["d"]
    empty = torch.zeros(batch, kv_heads, 0, d, dtype=data["x"].dtype)
    cache_k, cache_v = empty, empty.clone()
    chunks = data["chunks"]
    if case.variant.get("handed"):
        prompt = chunks[0][1]
        # Another prompt first, whose cache the grader then replaces (a server's slot reused): a
        # decode_step that keeps its own record of the calls it saw, keyed by what it returned,
        # would attend to that prompt (seventh red team).
        decoy = torch.randn(data["x"][:, :prompt].shape, generator=torch.Generator().manual_seed(prompt),
                            dtype=F64).to(data["x"].dtype)
        ctx.call(STEP, decoy, cache_k, cache_v, *(data["weights"][name] for name in WEIGHTS), case.sizes["heads"],
                 options=options)
        cache_k, cache_v = (cache[:, :, :prompt].to(data["x"].dtype) for cache in expected_cache(case).values())
        chunks = chunks[1:]
    steps = []
    for start, stop in chunks:
        reply = ctx.call(STEP, data["x"][:, start:stop], cache_k, cache_v,
                         *(data["weights"][name] for name in WEIGHTS), case.sizes["heads"], options=options)
        step = first_output_checks(reply.value, ("out", "cache_k", "cache_v"), STEP)
        steps.append(step)
        cache_k, cache_v = step["cache_k"], step["cache_v"]
    return steps


def run(ctx: CheckContext, case: Case, options: dict[str, Any] | None = None) -> dict[str, Tensor]:
    steps = generate(ctx, case, options)
    outs = [step["out"] for step in steps]
    if len({tuple(out.shape[:1]) + tuple(out.shape[2:]) for out in outs}) != 1 or outs[0].dim() != 3:
        raise CheckFailure(f"decode_step returned outputs of shapes {[tuple(o.shape) for o in outs[:3]]}...; "
                           "expected (B, t, d_model) for t new tokens", tried=case.label,
                           hint="Merge the heads back: (B, H, t, d) → (B, t, H·d), then apply W_o.")
    return {"out": torch.cat(outs, dim=1), "cache_k": steps[-1]["cache_k"], "cache_v": steps[-1]["cache_v"]}


def shrink(sizes: dict[str, int]) -> list[dict[str, int]]:
    candidates = []
    for key, least in (("tokens", 2), ("batch", 1), ("d", 1)):
        if sizes[key] > least:
            candidates.append({**sizes, key: sizes[key] - 1, "prompt": min(sizes["prompt"], sizes["tokens"] - 1)})
    return candidates


PROBLEM = FunctionProblem(HYPOTHESES, build, run, shrink)


def _sizes(heads: int = 4, kv_heads: int = 2, tokens: int = 8, prompt: int = 1, batch: int = 2,
           d: int = 4, step: int = 1) -> dict[str, int]:
    return {"batch": batch, "heads": heads, "kv_heads": kv_heads, "d": d, "tokens": tokens, "prompt": prompt,
            "step": step}


def check_append(ctx: CheckContext) -> str:
    generator = ctx.generator(1)
    for cached, new in ((0, 1), (5, 1), (3, 4)):
        cache_k, cache_v, k, v = (torch.randn(2, 3, length, 4, generator=generator)
                                  for length in (cached, cached, new, new))
        label = f"a cache of {cached} positions (2, 3, {cached}, 4), then {new} new"
        reply = ctx.call(APPEND, cache_k, cache_v, k, v)
        got = first_output_checks(reply.value, ("cache_k", "cache_v"), APPEND)
        for name, before, added in (("cache_k", cache_k, k), ("cache_v", cache_v, v)):
            want = torch.cat([before, added], dim=-2)
            mismatch = find_mismatch(name, got[name], want, Tolerance(0.0))
            if mismatch:
                in_front = torch.cat([added, before], dim=-2)
                if cached and not find_mismatch(name, got[name], in_front, Tolerance(0.0)):
                    raise CheckFailure(f"append_kv: {mismatch.summary}", tried=label, mismatches=[mismatch],
                                       named=PREPENDED)
                raise CheckFailure(f"append_kv: {mismatch.summary}", tried=label, mismatches=[mismatch],
                                   hint="Concatenate along the sequence axis, dim=-2 of (B, G, T, d): the cache "
                                        "grows by exactly the new positions.", quiz=lesson("kv-cache-prefill-vs-decode"))
    return "empty cache, one token, a chunk of four: concatenated on the sequence axis"


def check_decode(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(prompt=1), {}, ctx.seed + 10)
    return "8 tokens one at a time equal one causal pass over all 8 (H=4, G=2)"


def check_prompt_then_decode(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(prompt=5, tokens=9), {}, ctx.seed + 20)
    return "a prompt of 5 in one call, then 4 single tokens"


def check_chunks_on_filled_cache(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(prompt=2, tokens=9, step=3), {}, ctx.seed + 25)
    return "a prompt of 2, then calls of 3, 3 and 1 tokens on the filled cache"


NOT_READ = Diagnosis(
    "kv-cache-not-read", "decode_step does not attend to the cache it is handed: right on a cache it built itself, "
    "wrong on one it did not (the prompt's, handed in), so it reads keys and values from somewhere else: a record "
    "of earlier calls kept between them, or the inputs it saw", "Take K and V from cache_k and cache_v as given "
    "(append the new tokens' projections and attend over all of them); keep nothing between calls.",
    lesson("kv-cache-prefill-vs-decode"))


def check_handed_cache(ctx: CheckContext) -> str:
    """A server restores a cache (prefix caching, a swapped-in sequence): the calls after it must use its
    contents. A decode_step that remembers earlier calls passes every loop it played itself and fails here."""
    sizes = _sizes(prompt=5, tokens=9)
    try:
        verify(ctx, PROBLEM, sizes, {"handed": True}, ctx.seed + 35)
    except CheckFailure as failure:
        if failure.named is not None:
            raise
        verify(ctx, PROBLEM, sizes, {}, ctx.seed + 35)  # wrong on its own loop too: the failure above stands unnamed
        raise replace(failure, named=NOT_READ, diagnosis="", hint="", quiz="", diagnosis_id="") from None
    return "a prompt's cache of 5 positions handed in, then 4 single tokens"


def check_head_extremes(ctx: CheckContext) -> str:
    verify(ctx, PROBLEM, _sizes(heads=4, kv_heads=4, prompt=3, tokens=6), {}, ctx.seed + 30)
    verify(ctx, PROBLEM, _sizes(heads=4, kv_heads=1, prompt=3, tokens=6), {}, ctx.seed + 31)
    return "MHA (G = H) and MQA (G = 1)"


def check_cache_growth(ctx: CheckContext) -> str:
    case = build(_sizes(prompt=3, tokens=7), {}, ctx.seed + 40)
    steps = generate(ctx, case)
    want = expected_cache(case)
    batch, kv_heads, d = case.sizes["batch"], case.sizes["kv_heads"], case.sizes["d"]
    for (start, stop), step in zip(case.data["chunks"], steps):
        for name in ("cache_k", "cache_v"):
            shape = tuple(step[name].shape)
            if shape != (batch, kv_heads, stop, d):
                raise CheckFailure(f"after the call for positions {start}..{stop - 1}, {name} has shape {shape}; "
                                   f"expected {(batch, kv_heads, stop, d)}: the cache must grow by exactly the "
                                   f"{stop - start} new position(s)", tried=case.label,
                                   named=_shape_cause(shape, case))
            mismatch = find_mismatch(name, step[name], want[name][:, :, :stop], case.tolerance["out"],
                                     ("batch", "kv head", "position", "feature"))
            in_front = want[name][:, :, prepended(case.data["chunks"], stop)]
            if mismatch and not find_mismatch(name, step[name], in_front, case.tolerance["out"]):
                raise CheckFailure(f"{name} holds the tokens so far, latest call first: {mismatch.summary}",
                                   tried=case.label, mismatches=[mismatch], named=PREPENDED)
            if mismatch:
                raise CheckFailure(f"{name} does not hold the projections of the tokens so far: {mismatch.summary}",
                                   tried=case.label, mismatches=[mismatch],
                                   hint="Cache k = x @ W_k.T split into G heads, (B, G, T, d), before any "
                                        "expansion to H heads.", quiz=lesson("kv-cache-why-not-q"))
    return "one position per decode step, G heads, the K and V projections of every token"


def _shape_cause(shape: tuple[int, ...], case: Case) -> Diagnosis:
    """Why the cache has this shape: expanded to H heads (named), or grown along another axis."""
    heads, kv_heads = case.sizes["heads"], case.sizes["kv_heads"]
    if len(shape) == 4 and shape[1] == heads != kv_heads:
        return Diagnosis("kv-cache-expanded", "the cache stores the keys and values expanded to H heads",
                         KV_CACHE_EXPANDED_HINT, lesson("gqa-kv-cache-savings"))
    return Diagnosis("", "", "Concatenate along the sequence axis (dim=-2 of (B, G, T, d)).",
                     lesson("kv-cache-prefill-vs-decode"))


def check_memory_per_token(ctx: CheckContext) -> str:
    case = build(_sizes(heads=4, kv_heads=2, prompt=2, tokens=6), {"dtype": torch.bfloat16}, ctx.seed + 50)
    actual = run(ctx, case)
    sizes = case.sizes
    tokens, batch = sizes["tokens"], sizes["batch"]
    figure = budget.kv_cache_bytes(1, sizes["kv_heads"], sizes["d"], 1, 1, torch.bfloat16)
    held = sum(actual[name].numel() * actual[name].element_size() for name in ("cache_k", "cache_v"))
    per_token = held / (tokens * batch)
    if per_token != figure:
        if actual["cache_k"].element_size() > 2:
            cause = Diagnosis("kv-cache-upcast", f"the cache is kept in "
                              f"{str(actual['cache_k'].dtype).removeprefix('torch.')}, not the model's bfloat16",
                              "Store K and V in the input's dtype; upcast only inside the attention if you like.",
                              lesson("kv-cache-gpt2-per-token"))
        else:
            cause = _shape_cause(tuple(actual["cache_k"].shape), case)
        raise CheckFailure(f"the cache holds {per_token:g} bytes per token, but `quizprep budget` counts "
                           f"2 (K and V) × G={sizes['kv_heads']} × d_head={sizes['d']} × 2 bytes = {figure} per "
                           "token for one layer", tried=case.label, named=cause)
    found = mismatches(case, actual)
    if found:
        raise failure_for(ctx, PROBLEM, case, actual, found, ctx.seed, None)
    return f"{figure} bytes per token per layer in bf16, as quizprep budget's kv-cache figure"


def mask_without_cache_columns(message: str, code: str, frames: list[Any]) -> Diagnosis | None:
    """A causal mask built for the new tokens alone, (t, t), added to scores over the cache and
    the new tokens, (t, T + t): the broadcast fails on the key axis (llama's mask before start_pos)."""
    match, pair = BROADCAST.search(message), operands_of(code)
    if match is None or pair is None or int(match.group(1)) == int(match.group(2)):
        return None
    mask = next((name for name in re.findall(r"\w+", f"{pair[0]} {pair[1]}") if "mask" in name.lower()
                 or "bias" in name.lower()), None)
    if mask is None:
        return None
    built = re.search(rf"^\s*{re.escape(mask)}\s*=\s*(?!{re.escape(mask)}\b).*\(.*$", source_of(frames), re.MULTILINE)
    line = f"`{built.group(0).strip()}`" if built else f"`{mask}`"
    keys, new = sorted((int(match.group(1)), int(match.group(2))), reverse=True)
    return Diagnosis("kv-mask-no-offset", f"{line} builds the causal mask over the {new} new tokens only, but the "
                     f"scores cover {keys} keys, the cached ones and the new: the mask has no columns for the cache",
                     "Build it as causal_mask(t, T + t): every cached column visible, then the triangle shifted by "
                     "T, e.g. torch.ones(t, T + t, dtype=torch.bool).tril(diagonal=T) (True = may attend).",
                     lesson("masking-kv-cache-offset"))


# The real-world use each check stands for.
USAGE = {
    "append": "the cache update of every decoder layer: an empty cache, one token, a prefill chunk",
    "decode": "greedy generation: a one-token prompt, then one token per step",
    "prompt-then-decode": "a chat turn: the prompt in one parallel call, then generated tokens one by one",
    "chunks-on-cache": "chunked prefill of a long prompt and speculative decoding's verification of draft "
                       "tokens: t > 1 new tokens after T cached ones",
    "handed-cache": "prefix caching and a sequence swapped back in: the cache comes from elsewhere",
    "head-extremes": "multi-head (GPT-2, Llama 1) and multi-query (PaLM, Falcon) layers, G = H and G = 1",
    "cache-growth": "memory planning: one position per step, G heads, no expansion stored",
    "memory-per-token": "serving in bfloat16: the cache's bytes per token as `quizprep budget` counts them",
}

SPEC = ExerciseSpec(
    name="kv-cache",
    title="KV cache and decode step for causal grouped-query attention",
    entry_points=(APPEND, STEP),
    lessons=("kv-cache-prefill-vs-decode", "masking-kv-cache-offset", "gqa-head-mapping", "masking-causal-diagonal",
             "scaling-why-sqrt-dk", "multihead-output-projection"),
    forbidden=("sdpa", "mha"),
    crash_causes=(mask_without_cache_columns,),
    checks=(
        Check("append", "append_kv grows the cache along the sequence axis", check_append),
        Check("decode", "token by token equals the full causal pass", check_decode),
        Check("prompt-then-decode", "a prompt in one call, then single tokens", check_prompt_then_decode),
        Check("chunks-on-cache", "calls of several tokens on a filled cache", check_chunks_on_filled_cache),
        Check("handed-cache", "a cache handed in, then single tokens", check_handed_cache),
        Check("head-extremes", "MHA and MQA extremes", check_head_extremes),
        Check("cache-growth", "the cache grows by one position per step and holds G heads", check_cache_growth),
        Check("memory-per-token", "bytes per token match quizprep budget (bf16)", check_memory_per_token),
    ),
)
