# quizprep: exercise=online-softmax
# style: merge_states is the one primitive: a chunk is turned into its own state and merged, the larger max picked with torch.where, the smaller side scaled by exp(-|Δ|); chunks via torch.split, float32 state for half inputs
# expect: pass
from __future__ import annotations

import torch

State = tuple[torch.Tensor, torch.Tensor]


def _chunk_state(chunk: torch.Tensor) -> State:
    cmax = chunk.amax(dim=-1)
    shift = torch.where(torch.isneginf(cmax), torch.zeros_like(cmax), cmax)
    return cmax, torch.exp(chunk - shift.unsqueeze(-1)).sum(dim=-1)


def merge_states(max_a: torch.Tensor, sum_a: torch.Tensor, max_b: torch.Tensor,
                 sum_b: torch.Tensor) -> State:
    a_wins = max_a >= max_b
    big_max = torch.where(a_wins, max_a, max_b)
    small_max = torch.where(a_wins, max_b, max_a)
    big_sum = torch.where(a_wins, sum_a, sum_b)
    small_sum = torch.where(a_wins, sum_b, sum_a)
    gap = (big_max - small_max).nan_to_num(nan=0.0)  # -inf - -inf: both empty
    return big_max, big_sum + small_sum * torch.exp(-gap)


def online_update(row_max: torch.Tensor, row_sum: torch.Tensor,
                  chunk: torch.Tensor) -> State:
    return merge_states(row_max, row_sum, *_chunk_state(chunk.to(row_max.dtype)))


def online_softmax(x: torch.Tensor, chunk_size: int) -> torch.Tensor:
    work = torch.promote_types(x.dtype, torch.float32)
    state: State = (torch.full(x.shape[:-1], float("-inf"), dtype=work, device=x.device),
                    torch.zeros(x.shape[:-1], dtype=work, device=x.device))
    for chunk in torch.split(x, chunk_size, dim=-1):
        state = online_update(*state, chunk.to(work))
    row_max, row_sum = state
    return (torch.exp(x.to(work) - row_max.unsqueeze(-1)) / row_sum.unsqueeze(-1)).to(x.dtype)
