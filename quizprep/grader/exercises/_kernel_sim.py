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


def scaled_scores(q: Tensor, k: Tensor, scale: float | None = None) -> Tensor:
    """q kᵀ times `scale` (1/√d unless given) in float64."""
    return q.double() @ k.double().transpose(-2, -1) * (scale if scale is not None else q.shape[-1] ** -0.5)


def exact(q: Tensor, k: Tensor, v: Tensor, allowed: Tensor | None, scale: float | None = None) -> dict[str, Tensor]:
    """Attention and its log-sum-exp in float64 under a key-visibility mask (n, m) of bools; with
    `scale`, the scores are multiplied by it instead of 1/√d."""
    if scale is None:
        scores = scaled_scores(q, k)
        if allowed is not None:
            scores = scores.masked_fill(~allowed, float("-inf"))
        return {"out": reference.attention(q, k, v, allowed)[0], "lse": torch.logsumexp(scores, dim=-1)}
    return weighted(q, k, v, allowed.double() if allowed is not None else torch.ones(()), scale)


def weighted(q: Tensor, k: Tensor, v: Tensor, counts: Tensor, scale: float | None = None) -> dict[str, Tensor]:
    """Attention where key j counts `counts[i, j]` times in query i's softmax (0: hidden, 2: a key
    block a kernel visits twice); rows with no key are NaN, as a kernel's 0/0 is."""
    scores = scaled_scores(q, k, scale)
    row_max = scores.masked_fill(counts == 0, float("-inf")).amax(-1, keepdim=True)
    weights = (scores - row_max.nan_to_num(0.0, 0.0, 0.0)).exp() * counts
    total = weights.sum(-1, keepdim=True)
    return {"out": weights @ v.double() / total, "lse": (row_max + total.log()).squeeze(-1)}


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


def diagonal_twice(n: int, block_m: int) -> Tensor:
    """How often each key counts when a two-stage causal kernel's off-band loop runs one tile too far:
    the diagonal key tile is visited unmasked there, then again, masked, by the on-band stage."""
    queries, keys = torch.arange(n).unsqueeze(-1), torch.arange(n).unsqueeze(0)
    tile_start = queries // block_m * block_m
    return ((keys < tile_start + block_m).double() + ((keys >= tile_start) & (keys <= queries)).double())


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
           rescale_sum: bool = True, shift: bool = True, max_start: float = float("-inf"),
           divide_in_loop: bool = False, dtype: torch.dtype = F64, block_m: int | None = None,
           sum_start: float = 0.0) -> dict[str, Tensor]:
    """The online-softmax loop over key blocks, with a slip in the rescale of acc or ℓ, the shift,
    the running max's start (`max_start`) or the divide. ℓ starts at `sum_start`: 0, or 1 as in
    FlagGems, where the first tile's alpha = exp(-inf) = 0 wipes it unless ℓ is never rescaled.

    With `block_m` and a causal mask, a query tile stops after its diagonal key block, as the
    kernel's loop does: it matters only where a slip acts on blocks with no visible key."""
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    n = k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    row_max = torch.full((*q.shape[:-1], 1), max_start, dtype=dtype)
    row_sum = torch.full_like(row_max, sum_start)
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
        row_sum = row_sum * (alpha if rescale_sum else 1.0) + weights.sum(-1, keepdim=True)
        acc = acc * (alpha if rescale_acc else 1.0) + weights @ v[..., start:stop, :]
        if divide_in_loop:
            acc = torch.where(looped, acc / row_sum, acc)
        row_max = new_max
    out = acc if divide_in_loop else acc / row_sum
    return {"out": out.double(), "lse": (row_max + row_sum.log()).squeeze(-1).double()}


def read_with_strides(view: Tensor, strides: tuple[int, ...]) -> Tensor | None:
    """What a kernel reads from `view`'s memory when it steps through it with other strides (another
    input's, or contiguous ones); None when those strides reach past its storage (what is read there
    is anyone's guess)."""
    offset = view.storage_offset()
    reach = offset + sum((size - 1) * stride for size, stride in zip(view.shape, strides)) + 1
    memory = torch.empty(0, dtype=view.dtype).set_(view.untyped_storage())
    if reach > memory.numel() or min(strides) < 0:
        return None
    return memory.as_strided(view.shape, strides, offset)


def contiguous_strides(shape: torch.Size) -> tuple[int, ...]:
    return torch.empty(shape, device="meta").stride()


def wrong_lse(lse: Tensor, row_max: Tensor) -> list[Tensor]:
    """Log-sum-exps as commonly mis-stored: in log2 units (exp2 kernels), ℓ's log without the
    max, or the max alone."""
    return [lse / math.log(2.0), lse - row_max, row_max]
