"""Shapes of attention_backward's named mistakes that two-kernel code takes (FlashAttention-2's
Triton backward: a dK/dV pass over key blocks, a dQ pass over query blocks): a mistake in one pass
only, causal loop bounds with the wrong offset, P recomputed in mixed exponent bases."""
from __future__ import annotations

import math
from typing import Any, Callable

import torch
from torch import Tensor

Forms = list[dict[str, Tensor]]

LN2, LOG2E = math.log(2.0), 1.0 / math.log(2.0)
# P = exp(a·S − b·lse) with one term converted to base 2 and the other not: exp2 of a natural-log term
# (× ln 2), or exp of a log2(e)-scaled one (× log2 e). Both unconverted (P to a power) is another mistake,
# and in half precision too close to P to name.
BASES = ((1.0, LN2), (LN2, 1.0), (1.0, LOG2E), (LOG2E, 1.0))


def kernels(*mistakes: dict[str, Any]) -> list[dict[str, Any]]:
    """Each mistake everywhere, in the dK/dV kernel only ("kv") and in the dQ kernel only ("q")."""
    return [{**mistake, "kernel": kernel} for mistake in mistakes for kernel in ("both", "kv", "q")]


def unvisited(n: int, m: int, block: int, sign: int) -> list[tuple[Tensor, Tensor]]:
    """The (query, key) pairs a two-kernel tiled causal backward never visits when its loop bounds
    place query i at i + sign·(m − n) (its masks right): the dK/dV kernel starts each key block's
    query loop at lo = block start − offset, the dQ kernel stops each query block's key loop at
    hi = block end + offset; lo rounded down to a query block and hi up to whole key blocks, or not.
    block 0 is one block of n queries and one of m keys. One (before lo, from hi) pair per rounding."""
    bm, bn = block or n, block or m
    i, j, offset = torch.arange(n).unsqueeze(-1), torch.arange(m), sign * (m - n)
    pairs = []
    for rounded in (True, False):
        lo = (j // bn * bn - offset).clamp(min=0)
        hi = ((i // bm + 1) * bm + offset).clamp(0, m)
        if rounded:
            lo, hi = lo // bm * bm, (hi + bn - 1) // bn * bn
        pairs.append((i < lo, j >= hi))
    return pairs


def whole_blocks(future: Tensor, block: int) -> Tensor:
    """Only the block × block tiles whose every key is in the future: tiled code that skips the blocks
    past the diagonal but forgets the element mask inside the blocks that straddle it."""
    size = block or max(future.shape)
    kept = torch.zeros_like(future)
    for i in range(0, future.shape[0], size):
        for j in range(0, future.shape[1], size):
            kept[i:i + size, j:j + size] = bool(future[i:i + size, j:j + size].all())
    return kept


def every(*predictors: Callable[[Any], Forms | None]) -> Callable[[Any], Forms | None]:
    """One mistake whose predictors each give a list of forms: all of them."""
    def predict(case: Any) -> Forms | None:
        return [form for p in predictors for form in (p(case) or [])] or None

    return predict
