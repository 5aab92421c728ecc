# quizprep: exercise=online-softmax
# expect: check=merge diagnosis=online-rescale-inverted
# The merge scales each sum by exp(m - m_own), the inverse of the factor; an empty side adds nothing.
from __future__ import annotations

import torch


def _shift(row_max: torch.Tensor) -> torch.Tensor:
    """The maximum to subtract: 0 while nothing finite has been seen, so exp(−inf − 0) = 0."""
    return row_max.masked_fill(torch.isneginf(row_max), 0.0)


def merge_states(max_a: torch.Tensor, sum_a: torch.Tensor, max_b: torch.Tensor,
                 sum_b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    row_max = torch.maximum(max_a, max_b)
    scaled_a = (sum_a * (row_max - max_a).exp()).masked_fill(torch.isneginf(max_a), 0.0)
    scaled_b = (sum_b * (row_max - max_b).exp()).masked_fill(torch.isneginf(max_b), 0.0)
    return row_max, scaled_a + scaled_b


def online_update(row_max: torch.Tensor, row_sum: torch.Tensor,
                  chunk: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    chunk_max = chunk.amax(dim=-1)
    chunk_sum = (chunk - _shift(chunk_max).unsqueeze(-1)).exp().sum(dim=-1)
    return merge_states(row_max, row_sum, chunk_max, chunk_sum)


def online_softmax(x: torch.Tensor, chunk_size: int) -> torch.Tensor:
    work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    row_max = torch.full(work.shape[:-1], float("-inf"), dtype=work.dtype, device=x.device)
    row_sum = torch.zeros_like(row_max)
    for start in range(0, work.shape[-1], chunk_size):
        row_max, row_sum = online_update(row_max, row_sum, work[..., start:start + chunk_size])
    return ((work - row_max.unsqueeze(-1)).exp() / row_sum.unsqueeze(-1)).to(x.dtype)
