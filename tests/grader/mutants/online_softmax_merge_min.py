# quizprep: exercise=online-softmax
# expect: check=merge diagnosis=merge-min
# The merge keeps the smaller maximum: torch.where with the comparison flipped.
from __future__ import annotations

import torch


def _finite(m):
    return torch.where(torch.isneginf(m), torch.zeros_like(m), m)


def merge_states(max_a, sum_a, max_b, sum_b):
    row_max = torch.where(max_a < max_b, max_a, max_b)
    base = _finite(row_max)
    return row_max, sum_a * torch.exp(max_a - base) + sum_b * torch.exp(max_b - base)


def online_update(row_max, row_sum, chunk):
    chunk_max = chunk.amax(dim=-1)
    return merge_states(row_max, row_sum, chunk_max, torch.exp(chunk - _finite(chunk_max)[..., None]).sum(dim=-1))


def online_softmax(x, chunk_size):
    row_max = torch.full(x.shape[:-1], float("-inf"), dtype=x.dtype, device=x.device)
    row_sum = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
    for chunk in torch.split(x, chunk_size, dim=-1):
        row_max, row_sum = online_update(row_max, row_sum, chunk)
    return torch.exp(x - row_max[..., None]) / row_sum[..., None]
