# quizprep: exercise=attention
# style: the scale moved after the softmax, so the weights no longer sum to 1
# expect: fail diagnosis=weights-not-normalised
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1) / math.sqrt(q.shape[-1])
    return weights @ v, weights
