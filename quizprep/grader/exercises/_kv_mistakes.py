"""The KV-cache exercise's named slips: the generation loop in float64, each with one thing done
wrong, from the very inputs and chunks the learner received."""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from quizprep.grader import reference
from quizprep.grader.lessons import lesson
from quizprep.grader.problem import Case, Hypothesis
from quizprep.grader.spec import Diagnosis


def expected_cache(case: Case, params: dict[str, Tensor] | None = None) -> dict[str, Tensor]:
    params, kv_heads = params or case.data["params"], case.sizes["kv_heads"]
    return {f"cache_{name[-1].lower()}": reference.split_heads(reference.linear(case.data["x"], params, name), kv_heads)
            for name in ("W_k", "W_v")}


def simulate(case: Case, *, prompt_causal: bool = True, offset: bool = True, use_cache: str = "always",
             expand: str = "interleave", scale_by: str = "d_head", diagonal: bool = True,
             values: str = "cache_v", out_projection: bool = True,
             transposed_weights: bool = False, prepend: bool = False) -> dict[str, Tensor]:
    """The generation loop in float64 with one mistake."""
    data, sizes = case.data, case.sizes
    heads, group = sizes["heads"], sizes["heads"] // sizes["kv_heads"]
    x, params = data["x"], data["params"]
    if transposed_weights:  # x @ W: runs only where every weight is square, i.e. G = H and d_model = H·d
        params = {name: weight.T for name, weight in params.items()}
    q_all = reference.split_heads(reference.linear(x, params, "W_q"), heads)
    cache = expected_cache(case, params)
    scale = {"d_head": None, "one": 1.0, "d_model": 1.0 / math.sqrt(x.shape[-1])}[scale_by]
    outs = []
    for start, stop in data["chunks"]:
        own_only = use_cache == "never" or (use_cache == "single_tokens" and stop - start > 1)
        first = start if own_only else 0
        positions = prepended(data["chunks"], stop) if prepend else torch.arange(first, stop)
        k, v = (cache[name][:, :, positions] for name in ("cache_k", values))
        if expand == "interleave":
            k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        else:
            k, v = k.repeat(1, group, 1, 1), v.repeat(1, group, 1, 1)
        new, seen = stop - start, stop - first
        if not prompt_causal:
            mask = None
        elif offset:
            mask = reference.causal_mask(new, seen)
            mask = mask if diagonal else mask.tril(seen - new - 1)
        else:
            mask = torch.arange(seen).unsqueeze(0) <= torch.arange(new).unsqueeze(-1)
        heads_out, _ = reference.attention(q_all[:, :, start:stop], k, v, mask, scale)
        merged = reference.merge_heads(heads_out)
        outs.append(reference.linear(merged, params, "W_o") if out_projection else merged)
    return {"out": torch.cat(outs, dim=1)}


def prepended(chunks: list[tuple[int, int]], stop: int) -> Tensor:
    """The cache's positions when each call puts its new tokens in front: the latest chunk first."""
    return torch.cat([torch.arange(start, end) for start, end in reversed(chunks) if end <= stop])


def _mistake(**mistake: Any):
    def predict(case: Case) -> dict[str, Tensor] | None:
        if mistake.get("expand") and case.sizes["kv_heads"] in (1, case.sizes["heads"]):
            return None
        if mistake.get("transposed_weights") and case.sizes["kv_heads"] != case.sizes["heads"]:
            return None
        predicted = simulate(case, **mistake)
        return {"out": predicted["out"][:, case.sizes["prompt"]:]} if case.variant.get("handed") else predicted

    return predict


PREPENDED = Diagnosis("kv-prepended", "the new keys and values go in front of the cache (torch.cat((k, cache_k))): "
                      "positions are out of order, so the causal mask hides the wrong keys",
                      "Append after the cached positions: torch.cat((cache_k, k), dim=-2).",
                      lesson("kv-cache-prefill-vs-decode"))

HYPOTHESES = (
    Hypothesis("kv-prompt-not-causal", "the prompt's tokens attend to each other without a causal mask: the "
               "first call lets early tokens see later ones",
               "A chunk of t new tokens still needs causal_mask(t, T + t): token i of the chunk sees the cache "
               "and chunk tokens 0..i.", lesson("kv-cache-prefill-vs-decode"), _mistake(prompt_causal=False)),
    Hypothesis("kv-mask-no-offset", "the causal mask ignores the cached positions: new tokens are masked as if "
               "they sat at positions 0..t−1", "The new tokens are the last t of T + t positions: key j is "
               "visible to new token i when j ≤ T + i.", lesson("masking-kv-cache-offset"), _mistake(offset=False)),
    Hypothesis("kv-cache-unused", "the cache is not attended to: each call attends only to its own new tokens",
               "Append the new keys and values to the cache, then attend over the whole cache.",
               lesson("kv-cache-prefill-vs-decode"), _mistake(use_cache="never")),
    Hypothesis("kv-chunk-ignores-cache", "a call of several tokens on a filled cache attends only to its own "
               "tokens, as if it were the prompt", "Only the cache's length says where the new tokens sit: "
               "chunked prefill and speculative verification pass t > 1 tokens after T cached ones, and they "
               "must see all T + i keys.", lesson("kv-cache-prefill-vs-decode"), _mistake(use_cache="single_tokens")),
    Hypothesis("gqa-repeat", "KV heads expanded with repeat (tiled) instead of repeat_interleave",
               "Query head h reads KV head h // (H/G): k.repeat_interleave(H // G, dim=1).",
               lesson("gqa-head-mapping"), _mistake(expand="tile")),
    Hypothesis("kv-no-diagonal", "a new token does not see its own key: the mask's offset is one short",
               "New token i sits at position T + i and sees keys 0..T + i, itself included.",
               lesson("masking-causal-diagonal"), _mistake(diagonal=False)),
    Hypothesis("no-scale", "missing the 1/√d_head scaling", "Divide each head's scores by √d_head.",
               lesson("scaling-why-sqrt-dk"), _mistake(scale_by="one")),
    Hypothesis("scale-d-model", "scores divided by √d_model instead of √d_head",
               "Scale by the width of one head: d_head = W_q.shape[0] // n_heads.", lesson("scaling-why-sqrt-dk"),
               _mistake(scale_by="d_model")),
    Hypothesis("k-for-v", "the values are the keys (W_k used where W_v belongs)", "Values go through W_v.",
               lesson("multihead-output-projection"), _mistake(values="cache_k")),
    Hypothesis("weight-transposed", "the projections multiply by W, not W.T: x @ W as GPT-2's Conv1D (in, out) "
               "layout, on weights given in nn.Linear's (out, in) layout", "q = x @ W_q.T: the weights are "
               "(out_features, in_features), as nn.Linear stores them.", lesson("multihead-output-projection"),
               _mistake(transposed_weights=True)),
    Hypothesis("kv-prepended", PREPENDED.title, PREPENDED.hint, PREPENDED.quiz, _mistake(prepend=True)),
    Hypothesis("no-output-projection", "the output projection W_o is missing",
               "Merge the heads back to (B, t, H·d_head), then multiply by W_o.T.",
               lesson("multihead-output-projection"), _mistake(out_projection=False)),
)
