# quizprep: exercise=attention
# style: Megatron-like: leading dims folded, scores from baddbmm(beta=0, alpha=...) into an empty buffer
# expect: fail diagnosis=no-scale
# bug: alpha left at 1.0 (the norm factor was meant to be folded into alpha), so scores are never divided by sqrt(d_k)
from __future__ import annotations

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    *lead, n, d_k = q.shape
    m = k.shape[-2]
    q3 = q.reshape(-1, n, d_k)
    k3 = k.reshape(-1, m, d_k)
    matmul_result = torch.empty(q3.shape[0], n, m, dtype=q.dtype, device=q.device)
    matmul_result = torch.baddbmm(matmul_result, q3, k3.transpose(1, 2), beta=0.0, alpha=1.0)
    scores = matmul_result.view(*lead, n, m)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    context = torch.matmul(probs, v)
    return context, probs
