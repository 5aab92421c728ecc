# quizprep: exercise=sliding-window
# expect: check=mask-cache diagnosis=window-no-offset
import math

import torch


def sliding_window_mask(n, window, m=None):
    m = n if m is None else m
    back = torch.arange(n)[:, None] - torch.arange(m)[None, :]  # queries placed at 0..n-1  # BUG
    return (back >= 0) & (back < window)


def sliding_window_attention(q, k, v, window):
    mask = sliding_window_mask(q.shape[-2], window, k.shape[-2])
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~mask, float("-inf"))
    weights = torch.exp(scores - scores.amax(-1, keepdim=True))
    return weights / weights.sum(-1, keepdim=True) @ v
