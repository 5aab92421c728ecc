# quizprep: exercise=sliding-window
# expect: check=attention diagnosis=window-narrow
import math

import torch


def sliding_window_mask(n, window, m=None):
    m = n if m is None else m
    ones = torch.ones(n, m, dtype=torch.bool)
    return ones.tril(m - n) & ~ones.tril(m - n - window)


def sliding_window_attention(q, k, v, window):
    n, m = q.shape[-2], k.shape[-2]
    ones = torch.ones(n, m, dtype=torch.bool)
    mask = ones.tril(m - n) & ~ones.tril(m - n - window + 1)  # tril offset one too far: W - 1 keys  # BUG
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.exp(scores - scores.amax(-1, keepdim=True))
    return weights / weights.sum(-1, keepdim=True) @ v
