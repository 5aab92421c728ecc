# quizprep: exercise=sliding-window
# style: Mistral-like band mask built from two triangles, additive bias in float32
# expect: pass
import math

import torch


def sliding_window_mask(n, window, m=None):
    m = n if m is None else m
    full = torch.ones(n, m, dtype=torch.bool)
    causal = torch.tril(full, diagonal=m - n)
    too_old = torch.tril(full, diagonal=m - n - window)
    return causal & ~too_old


def sliding_window_attention(q, k, v, window):
    n, m = q.shape[-2], k.shape[-2]
    allowed = sliding_window_mask(n, window, m).to(q.device)
    bias = torch.zeros(n, m, device=q.device).masked_fill(~allowed, float("-inf"))
    scores = q.float() @ k.float().transpose(-1, -2) / math.sqrt(q.shape[-1]) + bias
    return (torch.softmax(scores, dim=-1) @ v.float()).to(q.dtype)
