# quizprep: exercise=attention
# style: batched-kernel code: flatten the batch to 3-D, float64 inside, torch.baddbmm with an additive -inf bias, cast back
# expect: pass
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    n, d_k = q.shape[-2:]
    m, d_v = k.shape[-2], v.shape[-1]
    lead = [q.shape[:-2], k.shape[:-2], v.shape[:-2]]
    if mask is not None:
        lead.append(mask.shape[:-2])
    batch = tuple(torch.broadcast_shapes(*lead))

    q3 = q.double().expand(*batch, n, d_k).reshape(-1, n, d_k)
    k3 = k.double().expand(*batch, m, d_k).reshape(-1, m, d_k)
    v3 = v.double().expand(*batch, m, d_v).reshape(-1, m, d_v)

    bias = torch.zeros(*batch, n, m, dtype=torch.float64, device=q.device)
    if mask is not None:
        bias = bias.masked_fill(~mask, float("-inf"))
    scores = torch.baddbmm(bias.reshape(-1, n, m), q3, k3.transpose(1, 2), alpha=1.0 / math.sqrt(d_k))
    weights = torch.softmax(scores, dim=-1)
    out = torch.bmm(weights, v3)
    return out.reshape(*batch, n, d_v).to(q.dtype), weights.reshape(*batch, n, m).to(q.dtype)
