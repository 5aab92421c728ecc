# quizprep: exercise=attention
# style: explicit Python loop over every flattened batch slice, 2-D matmuls per slice, results stacked
# expect: fail diagnosis=softmax-axis
# bug: on the 2-D (n, m) score matrix the softmax runs over dim=0, the queries, instead of the keys
from __future__ import annotations

import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    *lead, n, d_k = q.shape
    m, d_v = k.shape[-2], v.shape[-1]
    if mask is None:
        mask = torch.ones(n, m, dtype=torch.bool, device=q.device)
    qs = q.reshape(-1, n, d_k)
    ks = k.reshape(-1, m, d_k)
    vs = v.reshape(-1, m, d_v)
    masks = mask.expand(*lead, n, m).reshape(-1, n, m)
    outs, probs = [], []
    for i in range(qs.shape[0]):
        s = qs[i] @ ks[i].T / math.sqrt(d_k)
        s = s.masked_fill(~masks[i], float("-inf"))
        p = torch.softmax(s, dim=0)
        probs.append(p)
        outs.append(p @ vs[i])
    out = torch.stack(outs).reshape(*lead, n, d_v)
    weights = torch.stack(probs).reshape(*lead, n, m)
    return out, weights
