# quizprep: exercise=attention
# style: textbook formula written out: exp(scores) / sum(exp(scores)), masked keys at -inf
# expect: fail diagnosis=no-max-shift
# bug: the softmax is hand-written without subtracting the row max, so large logits overflow to inf/NaN
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    exp_scores = torch.exp(scores)
    weights = exp_scores / exp_scores.sum(dim=-1, keepdim=True)
    return weights @ v, weights
