# quizprep: exercise=attention
# style: T5-like plain attention (no relative position bias), scores computed unscaled as T5 does
# expect: fail diagnosis=weights-not-normalised
# bug: the 1/sqrt(d_k) factor is applied to the weights after the softmax, so each row sums to 1/sqrt(d_k)
from __future__ import annotations

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-1, -2))
    if mask is not None:
        scores = scores.masked_fill(torch.logical_not(mask), torch.finfo(scores.dtype).min)
    attn_weights = F.softmax(scores.float(), dim=-1).type_as(scores)
    attn_weights = attn_weights / q.shape[-1] ** 0.5
    attn_output = torch.matmul(attn_weights, v)
    return attn_output, attn_weights
