# quizprep: exercise=attention
# style: fairseq-like, queries multiplied by self-style `scaling` before the matmul, fp32 softmax
# expect: pass
from __future__ import annotations

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    scaling = q.size(-1) ** -0.5
    q = q * scaling  # out of place: the caller's tensor stays untouched
    attn_weights = torch.matmul(q, k.transpose(-1, -2))
    if mask is not None:
        attn_weights = attn_weights.masked_fill(mask.logical_not(), float("-inf"))
    attn_weights_float = F.softmax(attn_weights, dim=-1, dtype=torch.float32)
    attn_weights = attn_weights_float.type_as(attn_weights)
    attn = torch.matmul(attn_weights, v)
    return attn, attn_weights
