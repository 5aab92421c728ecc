# quizprep: exercise=sliding-window
# source: a one-line slip on openai/gpt-oss gpt_oss/torch/model.py @ 0568dfc94f09469e2968c2b90e50561d1b3fc424 (sdpa: mask = triu(new_full((n_tokens, n_tokens), -inf), diagonal=1); if sliding_window > 0: mask += tril(new_full(..., -inf), diagonal=-sliding_window); QK = einsum("qhmd,khmd->hmqk"); QK *= sm_scale; QK += mask; softmax; einsum("hmqk,khmd->qhmd"))
# style: an additive float mask of -inf built from two triangles (triu for the future, tril for the keys that fell out of the window), einsum for both products, the scale applied in place to the logits
# adapter: the reference runs without a cache (square n_tokens × n_tokens), so both diagonals move by the cache offset m - n; gpt-oss's (tokens, kv_heads, q_mult, d) layout and its attention sinks (an extra softmax column) left out: einsum over (B, H, n, d); sm_scale = 1/√d
# expect: fail diagnosis=window-edge-no-offset
# bug: a slip of ours: only the causal triangle moves by the cache offset; the window's tril keeps gpt-oss's diagonal=-sliding_window, so with m > n each query's window reaches m - n keys too far back
from __future__ import annotations

import math

import torch


def sliding_window_mask(n: int, window: int, m: int | None = None) -> torch.Tensor:
    m = n if m is None else m
    return _additive_mask(n, m, window, torch.empty(0)) == 0


def _additive_mask(n_q: int, n_k: int, sliding_window: int, like: torch.Tensor) -> torch.Tensor:
    offset = n_k - n_q
    mask = torch.triu(like.new_full((n_q, n_k), -float("inf")), diagonal=1 + offset)
    if sliding_window > 0:
        mask += torch.tril(
            mask.new_full((n_q, n_k), -float("inf")), diagonal=-sliding_window
        )
    return mask


def sliding_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int) -> torch.Tensor:
    sm_scale = 1 / math.sqrt(q.shape[-1])
    mask = _additive_mask(q.shape[-2], k.shape[-2], window, q)
    QK = torch.einsum("bhqd,bhkd->bhqk", q, k)
    QK *= sm_scale
    QK += mask[None, None, :, :]
    W = torch.softmax(QK, dim=-1)
    return torch.einsum("bhqk,bhkd->bhqd", W, v)
