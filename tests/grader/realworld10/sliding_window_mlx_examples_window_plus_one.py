# quizprep: exercise=sliding-window
# source: ml-explore/mlx-examples llms/mlx_lm/models/base.py (create_causal_mask(N, offset, window_size): mask = linds < rinds; mask = mask | (linds > rinds + window_size); return mask * -1e9), before ml-explore/mlx-lm PR #390 "fix window attention mask" (merged 2025-08-21: "The window attention mask had one too many values")
# style: additive mask from two index vectors, True = masked, scaled by -1e9 and cast to the activations' dtype; the rest of the attention written out
# adapter: mx.* rewritten as torch.* one for one; N = n, offset = m - n; mx.fast.scaled_dot_product_attention (SDPA, off limits) replaced by scores * scale + mask, softmax, @ v; sliding_window_mask returns the negation of the additive mask's support (True = may attend)
# expect: fail diagnosis=window-wide
# bug: as published: masked where linds > rinds + window_size, so key p - W is still kept and every full window holds W + 1 keys; mlx-lm PR #390 changed the test to linds >= rinds + window_size
from __future__ import annotations

import torch


def create_causal_mask(N: int, offset: int = 0, window_size: int | None = None, device=None):
    rinds = torch.arange(offset + N, device=device)
    linds = torch.arange(offset, offset + N, device=device) if offset else rinds
    linds = linds[:, None]
    rinds = rinds[None]
    mask = linds < rinds
    if window_size is not None:
        mask = mask | (linds > rinds + window_size)
    return mask * -1e9


def sliding_window_mask(n: int, window: int, m: int | None = None) -> torch.Tensor:
    m = n if m is None else m
    return create_causal_mask(n, m - n, window_size=window) == 0


def sliding_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int) -> torch.Tensor:
    T, S = q.shape[-2], k.shape[-2]
    mask = create_causal_mask(T, S - T, window_size=window, device=q.device).to(q.dtype)
    scale = q.shape[-1] ** -0.5
    scores = (q * scale) @ k.transpose(-1, -2)
    scores = scores + mask
    return torch.softmax(scores, dim=-1) @ v
