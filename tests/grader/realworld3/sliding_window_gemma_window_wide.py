# quizprep: exercise=sliding-window
# style: Gemma-like local attention comparing position distances
# expect: fail diagnosis=window-wide
# bug: keeps keys with distance <= window, one more than the window holds
import math

import torch


def sliding_window_mask(n, window, m=None):
    m = n if m is None else m
    q_pos = torch.arange(n).unsqueeze(-1) + (m - n)
    k_pos = torch.arange(m).unsqueeze(0)
    distance = q_pos - k_pos
    return (distance >= 0) & (distance <= window)


def sliding_window_attention(q, k, v, window):
    allowed = sliding_window_mask(q.shape[-2], window, k.shape[-2]).to(q.device)
    logits = torch.einsum("bhnd,bhmd->bhnm", q, k) * q.shape[-1] ** -0.5
    logits = logits.masked_fill(~allowed, torch.finfo(logits.dtype).min)
    probs = torch.softmax(logits.float(), dim=-1).to(q.dtype)
    return torch.einsum("bhnm,bhmd->bhnd", probs, v)
