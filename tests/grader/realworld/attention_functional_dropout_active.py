# quizprep: exercise=attention
# style: functional attention with a dropout_p argument, masked_fill(~mask, -inf)
# expect: fail diagnosis=dropout-active
# bug: F.dropout(weights, p) keeps its default training=True, so weights are dropped at every call
import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.1):
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = F.softmax(scores, dim=-1)
    weights = F.dropout(weights, p=dropout_p)
    return torch.matmul(weights, v), weights
