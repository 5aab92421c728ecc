# quizprep: exercise=attention
# style: hand-written softmax (exp then divide by the row sum), mask applied as -inf with masked_fill
# expect: fail diagnosis=no-max-shift
# bug: exp() of the raw scores without subtracting the row max: overflows to inf (then NaN) for large logits, first in float16
from __future__ import annotations

import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    numer = scores.exp()
    weights = numer / numer.sum(dim=-1, keepdim=True)
    return weights @ v, weights
