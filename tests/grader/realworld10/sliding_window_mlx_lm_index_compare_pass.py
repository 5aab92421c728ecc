# quizprep: exercise=sliding-window
# source: ml-explore/mlx-lm mlx_lm/models/base.py @ 0d3ec31943aa2834862dd6ad190ea9eeb3cd680e (create_causal_mask: rinds = arange(offset + N), linds = arange(offset, offset + N); mask = linds >= rinds; with window_size, mask & (linds < rinds + window_size); quantized_scaled_dot_product_attention: where(mask, scores, finfo.min), softmax(precise=True))
# style: boolean mask from two index vectors (query positions from the cache offset, key positions from 0), no tril/triu; masked scores set to the dtype's finfo.min, the softmax in float32 ("precise")
# adapter: mx.* rewritten as torch.* one for one; N = n and offset = m - n; mx.fast.scaled_dot_product_attention (SDPA, off limits) written out as mlx-lm's quantized path does it: queries scaled, scores, where, softmax in float32, @ v
# expect: pass
from __future__ import annotations

import torch


def create_causal_mask(N: int, offset: int = 0, window_size: int | None = None, device=None):
    rinds = torch.arange(offset + N, device=device)
    linds = torch.arange(offset, offset + N, device=device) if offset else rinds
    linds = linds[:, None]
    rinds = rinds[None]
    mask = linds >= rinds
    if window_size is not None:
        mask = mask & (linds < rinds + window_size)
    return mask


def sliding_window_mask(n: int, window: int, m: int | None = None) -> torch.Tensor:
    m = n if m is None else m
    return create_causal_mask(n, m - n, window_size=window)


def sliding_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int) -> torch.Tensor:
    qL, kL = q.shape[-2], k.shape[-2]
    scale = q.shape[-1] ** -0.5
    queries = q * scale
    scores = queries @ k.transpose(-1, -2)
    mask = create_causal_mask(qL, kL - qL, window_size=window, device=q.device)
    scores = torch.where(mask, scores, torch.finfo(scores.dtype).min)
    scores = torch.softmax(scores.float(), dim=-1).to(scores.dtype)
    return scores @ v
