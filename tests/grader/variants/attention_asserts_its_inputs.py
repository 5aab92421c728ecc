# quizprep: exercise=attention
# expect: pass
# Correct, with asserts on its inputs' values: on the device check's meta inputs torch raises inside
# the assert (bool() of a meta tensor), which is no refusal of the device by the learner.
from __future__ import annotations

import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    assert torch.all(torch.isfinite(q)), "inputs must be finite"
    assert q.shape[-1] == k.shape[-1], "q and k need the same feature size"
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
