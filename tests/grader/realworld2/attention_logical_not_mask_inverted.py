# quizprep: exercise=attention
# style: mask converted once with .logical_not() into a `blocked` tensor, then torch.where
# expect: fail diagnosis=mask-inverted
# bug: torch.where keeps the scores where `blocked` is True, so the allowed keys get -inf and the masked ones survive
from __future__ import annotations

import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        blocked = mask.logical_not()
        scores = torch.where(blocked, scores, torch.full_like(scores, float("-inf")))
    weights = scores.softmax(dim=-1)
    return torch.matmul(weights, v), weights
