# quizprep: exercise=attention
# style: textbook code that reads d_k from the wrong axis (size(-2) is the number of queries)
# expect: fail diagnosis=scale-seq-len
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = q.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
