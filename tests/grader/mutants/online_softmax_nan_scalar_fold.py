# quizprep: exercise=online-softmax
# expect: check=masked diagnosis=online-nan-masked-chunk
# The state is folded one logit at a time (a scalar loop, as a CUDA thread walks its row), with no
# guard for a running maximum of -inf: a row whose first logit is masked turns NaN at once.
from __future__ import annotations

import torch


def _fold_one(m: torch.Tensor, s: torch.Tensor, value: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    bigger = torch.where(value > m, value, m)
    return bigger, s * torch.exp(m - bigger) + torch.exp(value - bigger)


def online_update(row_max, row_sum, chunk):
    m, s = row_max, row_sum
    for column in chunk.unbind(dim=-1):
        m, s = _fold_one(m, s, column)
    return m, s


def merge_states(max_a, sum_a, max_b, sum_b):
    top = torch.maximum(max_a, max_b)
    safe = torch.where(torch.isinf(top), torch.zeros_like(top), top)
    return top, sum_a * torch.exp(max_a - safe) + sum_b * torch.exp(max_b - safe)


def online_softmax(x, chunk_size):
    acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    values = x.to(acc)
    m = values.new_full(values.shape[:-1], float("-inf"))
    s = values.new_zeros(values.shape[:-1])
    for lo in range(0, values.shape[-1], chunk_size):
        for column in values[..., lo:lo + chunk_size].unbind(dim=-1):
            m, s = _fold_one(m, s, column)
    return (torch.exp(values - m[..., None]) / s[..., None]).to(x.dtype)
