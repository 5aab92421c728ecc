# quizprep: exercise=sliding-window
# expect: check=mask diagnosis=window-wide
import math

import torch


def sliding_window_mask(n, window, m=None):
    m = n if m is None else m
    i = torch.arange(n)[:, None] + (m - n)
    j = torch.arange(m)[None, :]
    return (j <= i) & (j >= i - window)  # one key too many  # BUG


def sliding_window_attention(q, k, v, window):
    mask = sliding_window_mask(q.shape[-2], window, k.shape[-2])
    scores = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~mask, float("-inf"))
    return torch.exp(scores - scores.amax(-1, keepdim=True)).div(
        torch.exp(scores - scores.amax(-1, keepdim=True)).sum(-1, keepdim=True)) @ v
