# quizprep: exercise=attention
# style: softmax written by hand (exp / sum with the row max subtracted), torch.where(mask, scores, -inf)
# expect: pass
from __future__ import annotations

import math

import torch


def _softmax_last(scores: torch.Tensor) -> torch.Tensor:
    shifted = scores - scores.amax(dim=-1, keepdim=True)
    e = torch.exp(shifted)
    return e / e.sum(dim=-1, keepdim=True)


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        neg_inf = torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device)
        scores = torch.where(mask, scores, neg_inf)
    weights = _softmax_last(scores)
    return weights @ v, weights
