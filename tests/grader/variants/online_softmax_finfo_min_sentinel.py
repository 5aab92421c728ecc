# quizprep: exercise=online-softmax
# Correct, in another style: like many GPU kernels, the running maximum never holds -inf; it is
# clamped to the lowest finite value of the working dtype, so exp(m - m_new) is never
# exp(-inf - (-inf)). A state that has seen only -inf comes back as (finfo.min, 0).
from __future__ import annotations

import torch


def _floor(t: torch.Tensor) -> torch.Tensor:
    return t.clamp(min=torch.finfo(t.dtype).min)


def online_update(row_max, row_sum, chunk):
    m_old = _floor(row_max)
    m_new = _floor(torch.maximum(m_old, chunk.amax(dim=-1)))
    total = row_sum * torch.exp(m_old - m_new) + torch.exp(chunk - m_new.unsqueeze(-1)).sum(dim=-1)
    return m_new, total


def merge_states(max_a, sum_a, max_b, sum_b):
    a, b = _floor(max_a), _floor(max_b)
    m = torch.maximum(a, b)
    return m, sum_a * torch.exp(a - m) + sum_b * torch.exp(b - m)


def online_softmax(x, chunk_size):
    work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    m = torch.full(work.shape[:-1], torch.finfo(work.dtype).min, dtype=work.dtype, device=x.device)
    s = torch.zeros_like(m)
    for start in range(0, work.shape[-1], chunk_size):
        m, s = online_update(m, s, work[..., start:start + chunk_size])
    return (torch.exp(work - m.unsqueeze(-1)) / s.unsqueeze(-1)).to(x.dtype)
