# quizprep: exercise=attention
# style: tutorial code written for (batch, n, m) scores, F.softmax with dim=1
# expect: fail diagnosis=softmax-axis
# bug: softmax normalises over dim=1 (the queries for 3-D input) instead of the keys
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    attn = F.softmax(scores, dim=1)
    return torch.matmul(attn, v), attn
