# quizprep: exercise=sliding-window
# Correct, in another style: the mask from a Python loop over rows, attention one query at a
# time over its own slice of keys (no mask at all), in float32 for half inputs.
import math

import torch


def sliding_window_mask(n, window, m=None):
    m = n if m is None else m
    mask = torch.zeros(n, m, dtype=torch.bool)
    for i in range(n):
        position = i + m - n
        mask[i, max(0, position - window + 1):position + 1] = True
    return mask


def sliding_window_attention(q, k, v, window):
    n, m = q.shape[-2], k.shape[-2]
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    rows = []
    for i in range(n):
        position = i + m - n
        first = max(0, position - window + 1)
        keys, values = k[..., first:position + 1, :].to(work), v[..., first:position + 1, :].to(work)
        scores = torch.einsum("bhd,bhjd->bhj", q[..., i, :].to(work), keys) / math.sqrt(q.shape[-1])
        weights = torch.exp(scores - scores.max(-1, keepdim=True).values)
        rows.append(torch.einsum("bhj,bhjd->bhd", weights / weights.sum(-1, keepdim=True), values))
    return torch.stack(rows, dim=-2).to(q.dtype)
