# quizprep: exercise=attention
# style: textbook (d2l-like) with masked_fill(~mask, -inf)
# expect: fail diagnosis=softmax-axis
# bug: the softmax is taken over the query axis (dim=-2) instead of the keys
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    d = q.shape[-1]
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    attention_weights = torch.softmax(scores, dim=-2)
    return torch.matmul(attention_weights, v), attention_weights
