# quizprep: exercise=attention
# style: textbook one-liner, masked_fill(~mask, -inf)
# expect: fail diagnosis=weights-not-normalised
# bug: the 1/sqrt(d_k) factor is applied to the weights after the softmax, so rows sum to 1/sqrt(d_k)
import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1) / math.sqrt(k.shape[-1])
    return weights @ v, weights
