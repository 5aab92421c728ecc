# quizprep: exercise=attention
# style: additive bias built by multiplying the inverted mask with -inf, bmm over flattened batch
# expect: fail diagnosis=nan-outputs
# bug: 0 * -inf = NaN, so every allowed position becomes NaN whenever a mask is given
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    lead = q.shape[:-2]
    n, d = q.shape[-2:]
    m = k.shape[-2]
    qf = q.reshape(-1, n, d)
    kf = k.reshape(-1, m, d)
    vf = v.reshape(-1, m, v.shape[-1])
    scores = torch.bmm(qf, kf.transpose(1, 2)) / math.sqrt(d)
    if mask is not None:
        bias = (~mask).to(q.dtype) * float("-inf")
        scores = scores + bias.expand(*lead, n, m).reshape(-1, n, m)
    weights = torch.softmax(scores, dim=-1)
    out = torch.bmm(weights, vf)
    return out.reshape(*lead, n, -1), weights.reshape(*lead, n, m)
