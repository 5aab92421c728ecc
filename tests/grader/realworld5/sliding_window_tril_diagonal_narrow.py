# quizprep: exercise=sliding-window
# style: the band built from two tril calls on a ones matrix (keys up to p, minus keys up to p − W), HF-style additive float mask from it
# expect: fail diagnosis=window-narrow
# bug: the lower tril uses diagonal m − n − window + 1 instead of m − n − window, so the band holds W − 1 keys, not W
import math

import torch


def sliding_window_mask(n, window, m=None):
    if m is None:
        m = n
    ones = torch.ones(n, m, dtype=torch.bool)
    upto_self = ones.tril(diagonal=m - n)
    too_old = ones.tril(diagonal=m - n - window + 1)
    return upto_self & ~too_old


def sliding_window_attention(q, k, v, window):
    n, m = q.size(-2), k.size(-2)
    allowed = sliding_window_mask(n, window, m).to(q.device)
    bias = torch.zeros(n, m, dtype=q.dtype, device=q.device).masked_fill(~allowed, torch.finfo(q.dtype).min)
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1)) + bias
    return torch.softmax(scores, dim=-1) @ v
