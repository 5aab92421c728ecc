# quizprep: exercise=attention
# style: PyTorch-tutorial style function with math.sqrt and masked_fill(mask == 0, -inf)
# expect: fail diagnosis=scale-dv
# bug: the scale reads the size of v's last axis, sqrt(d_v), instead of q's, sqrt(d_k)
from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    d = v.size(-1)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    p_attn = F.softmax(scores, dim=-1)
    return torch.matmul(p_attn, v), p_attn
