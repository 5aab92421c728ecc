# quizprep: exercise=online-softmax
# style: functional style: a State NamedTuple, online_update written as "make the chunk's own state, then merge", online_softmax as functools.reduce over torch.split chunks
# expect: fail diagnosis=online-nan-masked-chunk
# bug: the -inf guard is only in the chunk's own state (_chunk_state); merge_states shifts by the raw max, so when both maxima are -inf (the empty state merged with an all -inf chunk, e.g. a masked first chunk) exp(-inf - (-inf)) gives NaN, and the NaN spreads into the rest of the row
import functools
from typing import NamedTuple

import torch


class State(NamedTuple):
    row_max: torch.Tensor
    row_sum: torch.Tensor


def _chunk_state(chunk):
    cmax = chunk.amax(dim=-1)
    shift = torch.where(torch.isinf(cmax), torch.zeros_like(cmax), cmax)
    return State(cmax, torch.exp(chunk - shift.unsqueeze(-1)).sum(dim=-1))


def merge_states(max_a, sum_a, max_b, sum_b):
    new_max = torch.maximum(max_a, max_b)
    new_sum = sum_a * torch.exp(max_a - new_max) + sum_b * torch.exp(max_b - new_max)
    return new_max, new_sum


def online_update(row_max, row_sum, chunk):
    part = _chunk_state(chunk)
    return merge_states(row_max, row_sum, part.row_max, part.row_sum)


def online_softmax(x, chunk_size):
    empty = State(torch.full(x.shape[:-1], float("-inf"), dtype=x.dtype, device=x.device),
                  torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device))
    final = functools.reduce(lambda s, c: State(*online_update(s.row_max, s.row_sum, c)),
                             torch.split(x, chunk_size, dim=-1), empty)
    return torch.exp(x - final.row_max.unsqueeze(-1)) / final.row_sum.unsqueeze(-1)
