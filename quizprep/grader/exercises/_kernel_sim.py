"""The forward kernel of exercises/flash_triton.py replayed in float64, tile by tile, with one
named bug switched on: what a learner's kernel with that bug returns.

The learner picks the tile sizes, so predictions are made for each common one (TILES) and the
hypotheses accept any of them (see :func:`quizprep.grader.problem.either`).
"""
from __future__ import annotations

import math

import torch
from torch import Tensor

from quizprep.grader import reference

TILES = (16, 32, 64, 128)
F64 = torch.float64


def scaled_scores(q: Tensor, k: Tensor) -> Tensor:
    return q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])


def exact(q: Tensor, k: Tensor, v: Tensor, allowed: Tensor | None) -> dict[str, Tensor]:
    """Attention and its log-sum-exp in float64 under a key-visibility mask (n, m) of bools."""
    scores = scaled_scores(q, k)
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    return {"out": reference.attention(q, k, v, allowed)[0], "lse": torch.logsumexp(scores, dim=-1)}


def causal_allowed(n: int) -> Tensor:
    return reference.causal_mask(n, n)


def block_rule_allowed(n: int, block_m: int, block_n: int, rule: str) -> Tensor:
    """Which keys each query sees when the kernel's causal loop bound or diagonal mask is wrong.

    "diagonal unmasked": every key block that starts before the query tile ends, whole;
    "stops early": only the key blocks wholly before the query tile (the diagonal one skipped);
    "one past": the diagonal masked per element, and the next key block computed unmasked."""
    queries, keys = torch.arange(n).unsqueeze(-1), torch.arange(n).unsqueeze(0)
    tile_end = (queries // block_m + 1) * block_m
    key_block_start = keys // block_n * block_n
    if rule == "diagonal unmasked":
        return key_block_start < tile_end
    if rule == "stops early":
        return keys < queries // block_m * block_m
    return (keys <= queries) | ((keys >= tile_end) & (key_block_start < tile_end + block_n))


def padded_keys(q: Tensor, k: Tensor, v: Tensor, block_n: int) -> dict[str, Tensor] | None:
    """Keys past n loaded as zeros (a masked load's default) and never masked: each ragged row
    softmaxes over phantom keys with score 0 and value 0."""
    n = k.shape[-2]
    extra = -n % block_n
    if extra == 0:
        return None
    pad = torch.zeros(*k.shape[:-2], extra, k.shape[-1], dtype=F64)
    return exact(q, torch.cat([k.double(), pad], -2), torch.cat([v.double(), pad], -2), None)


def online(q: Tensor, k: Tensor, v: Tensor, allowed: Tensor | None, block_n: int, *, rescale_acc: bool = True,
           shift: bool = True, divide_in_loop: bool = False, dtype: torch.dtype = F64,
           block_m: int | None = None) -> dict[str, Tensor]:
    """The online-softmax loop over key blocks, with a slip in the rescale, the shift or the divide.

    With `block_m` and a causal mask, a query tile stops after its diagonal key block, as the
    kernel's loop does: it matters only where a slip acts on blocks with no visible key."""
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    n = k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    row_max = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=dtype)
    row_sum = torch.zeros_like(row_max)
    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=dtype)
    tile_end = (torch.arange(q.shape[-2]).unsqueeze(-1) // block_m + 1) * block_m if block_m else None
    for start in range(0, n, block_n):
        stop = min(start + block_n, n)
        looped = torch.tensor(True) if tile_end is None or allowed is None else start < tile_end
        scores = q @ k[..., start:stop, :].transpose(-2, -1) * scale
        if allowed is not None:
            scores = scores.masked_fill(~allowed[..., start:stop], float("-inf"))
        new_max = torch.maximum(row_max, scores.amax(-1, keepdim=True)) if shift else torch.zeros_like(row_max)
        finite = new_max.masked_fill(torch.isneginf(new_max), 0.0)
        alpha, weights = (row_max - finite).exp() if shift else torch.ones_like(row_max), (scores - finite).exp()
        row_sum = row_sum * alpha + weights.sum(-1, keepdim=True)
        acc = acc * (alpha if rescale_acc else 1.0) + weights @ v[..., start:stop, :]
        if divide_in_loop:
            acc = torch.where(looped, acc / row_sum, acc)
        row_max = new_max
    out = acc if divide_in_loop else acc / row_sum
    return {"out": out.double(), "lse": (row_max + row_sum.log()).squeeze(-1).double()}


def strided_as_contiguous(tensor: Tensor, keep_rows: bool) -> Tensor:
    """What a kernel reads from a non-contiguous input (the grader's every-other-element layout,
    a view into a buffer twice as wide) when it assumes contiguous strides: all of them, or only
    the feature stride (keep_rows) when it uses the others."""
    wide = torch.zeros(*tensor.shape[:-1], tensor.shape[-1] * 2, dtype=tensor.dtype)
    wide[..., ::2] = tensor
    if keep_rows:
        return wide.as_strided(tensor.shape, wide.stride()[:-1] + (1,))
    return wide.reshape(-1)[: tensor.numel()].reshape(tensor.shape)


def wrong_lse(lse: Tensor, row_max: Tensor) -> list[Tensor]:
    """Log-sum-exps as commonly mis-stored: in log2 units (exp2 kernels), ℓ's log without the
    max, or the max alone."""
    return [lse / math.log(2.0), lse - row_max, row_max]
