# quizprep: exercise=online-softmax
# expect: check=one-pass diagnosis=online-whole-row unread=chunk_size
# online_softmax from one logsumexp over the row, chunk_size never read; update and merge are right.
from __future__ import annotations

import torch


def _shift(row_max: torch.Tensor) -> torch.Tensor:
    """The maximum to subtract: 0 while nothing finite has been seen, so exp(−inf − 0) = 0."""
    return row_max.masked_fill(torch.isneginf(row_max), 0.0)


def merge_states(max_a: torch.Tensor, sum_a: torch.Tensor, max_b: torch.Tensor,
                 sum_b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    row_max = torch.maximum(max_a, max_b)
    shift = _shift(row_max)
    return row_max, sum_a * (max_a - shift).exp() + sum_b * (max_b - shift).exp()


def online_update(row_max: torch.Tensor, row_sum: torch.Tensor,
                  chunk: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    chunk_max = chunk.amax(dim=-1)
    chunk_sum = (chunk - _shift(chunk_max).unsqueeze(-1)).exp().sum(dim=-1)
    new_max = torch.maximum(row_max, chunk_max)
    return new_max, row_sum * (row_max - _shift(new_max)).exp() + chunk_sum * (chunk_max - _shift(new_max)).exp()


def online_softmax(x: torch.Tensor, chunk_size: int) -> torch.Tensor:
    work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    return (work - torch.logsumexp(work, dim=-1, keepdim=True)).exp().to(x.dtype)
