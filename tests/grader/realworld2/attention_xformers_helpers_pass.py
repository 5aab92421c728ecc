# quizprep: exercise=attention
# style: xformers-like small helpers, leading dims flattened into one batch axis for bmm
# expect: pass
from __future__ import annotations

import math

import torch


def _fold(x: torch.Tensor) -> torch.Tensor:
    # bmm wants exactly one batch axis: (..., r, c) -> (prod(...), r, c)
    return x.reshape(-1, x.shape[-2], x.shape[-1])


def _matmul_with_mask(a: torch.Tensor, b: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    scores = torch.bmm(a, b.transpose(-2, -1))
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    return scores


def scaled_query_key_softmax(
    q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor | None
) -> torch.Tensor:
    q = q / math.sqrt(q.shape[-1])
    return torch.softmax(_matmul_with_mask(q, k, mask), dim=-1)


def scaled_dot_product_attention(q, k, v, mask=None):
    lead = q.shape[:-2]
    n, m = q.shape[-2], k.shape[-2]
    if mask is not None:
        mask = _fold(mask.expand(*lead, n, m))
    att = scaled_query_key_softmax(_fold(q), _fold(k), mask)
    out = torch.bmm(att, _fold(v))
    return out.reshape(*lead, n, v.shape[-1]), att.reshape(*lead, n, m)
