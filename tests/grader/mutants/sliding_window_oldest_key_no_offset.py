# quizprep: exercise=sliding-window
# expect: check=mask-cache diagnosis=window-edge-no-offset
# The causal edge moves with the cache offset, the window's oldest key is counted from the row index.
import math

import torch


def sliding_window_mask(n, window, m=None):
    m = n if m is None else m
    rows, keys = torch.arange(n)[:, None], torch.arange(m)[None, :]
    position = rows + (m - n)
    return (keys <= position) & (rows - keys < window)  # BUG: rows, not position


def sliding_window_attention(q, k, v, window):
    mask = sliding_window_mask(q.shape[-2], window, k.shape[-2]).to(q.device)
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~mask, float("-inf"))
    weights = torch.exp(scores - scores.amax(-1, keepdim=True))
    return weights / weights.sum(-1, keepdim=True) @ v
