# quizprep: exercise=sliding-window
# expect: check=attention diagnosis=no-scale
# The scores are not scaled.
from __future__ import annotations

import math

import torch


def sliding_window_mask(n: int, window: int, m: int | None = None) -> torch.Tensor:
    m = n if m is None else m
    positions = torch.arange(n).unsqueeze(-1) + (m - n)
    back = positions - torch.arange(m).unsqueeze(0)  # how far key j lies behind the query
    return (back >= 0) & (back < window)


def sliding_window_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int) -> torch.Tensor:
    mask = sliding_window_mask(q.shape[-2], window, k.shape[-2]).to(q.device)
    work = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype
    scores = q.to(work) @ k.to(work).transpose(-2, -1)  # BUG
    scores = scores.masked_fill(~mask, float("-inf"))
    weights = (scores - scores.amax(dim=-1, keepdim=True)).exp()
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return (weights @ v.to(work)).to(q.dtype)
