# quizprep: exercise=attention
# style: textbook loops: one query at a time, hand-written max-shifted softmax, weighted sum of the values
# expect: pass
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    n, d_k = q.shape[-2:]
    m, d_v = k.shape[-2], v.shape[-1]
    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    if mask is None:
        mask = torch.ones(n, m, dtype=torch.bool, device=q.device)
    Q = q.expand(*batch, n, d_k).reshape(-1, n, d_k)
    K = k.expand(*batch, m, d_k).reshape(-1, m, d_k)
    V = v.expand(*batch, m, d_v).reshape(-1, m, d_v)
    M = mask.expand(*batch, n, m).reshape(-1, n, m)

    outputs, weights = [], []
    for b in range(Q.shape[0]):
        out_rows, weight_rows = [], []
        for i in range(n):
            scores = (K[b] @ Q[b, i]) / math.sqrt(d_k)  # one score per key
            scores = scores.masked_fill(~M[b, i], float("-inf"))
            exps = torch.exp(scores - scores.max())
            w = exps / exps.sum()
            weight_rows.append(w)
            out_rows.append((w[:, None] * V[b]).sum(dim=0))
        outputs.append(torch.stack(out_rows))
        weights.append(torch.stack(weight_rows))
    out = torch.stack(outputs).reshape(*batch, n, d_v)
    return out, torch.stack(weights).reshape(*batch, n, m)
