# quizprep: exercise=online-softmax
# source: pytorch/pytorch torch/_inductor/runtime/triton_helpers.py (online_softmax_reduce, online_softmax_combine), tl.* rewritten as torch.*
# style: Inductor's online softmax: the chunk max shifted by 0 where it is -inf (tl.where(max == -inf, 0, ...)), so an all -inf chunk leaves the state (-inf, chunk length); the combine scales both sums by 1.0 where the merged max is -inf, by exp(max_i - max) elsewhere (online_softmax_combine_with_sum)
# expect: pass
import torch


def _reduce(chunk):
    # online_softmax_reduce: the chunk's own (max, sum); delta is 0 where the max is -inf
    out_max = chunk.amax(dim=-1)
    delta = torch.where(out_max[..., None] == float("-inf"), torch.zeros_like(chunk), chunk - out_max[..., None])
    return out_max, torch.exp(delta).sum(dim=-1)


def _combine(lhs_max, lhs_sum, rhs_max, rhs_sum):
    # online_softmax_combine_with_sum: while the merged max is -inf both sums are kept as they are
    out_max = torch.maximum(lhs_max, rhs_max)
    empty = out_max == float("-inf")
    lhs_scale = torch.where(empty, torch.ones_like(out_max), torch.exp(lhs_max - out_max))
    rhs_scale = torch.where(empty, torch.ones_like(out_max), torch.exp(rhs_max - out_max))
    return out_max, lhs_sum * lhs_scale + rhs_sum * rhs_scale


def online_update(row_max, row_sum, chunk):
    return _combine(row_max, row_sum, *_reduce(chunk))


def merge_states(max_a, sum_a, max_b, sum_b):
    return _combine(max_a, sum_a, max_b, sum_b)


def online_softmax(x, chunk_size):
    row_max = torch.full(x.shape[:-1], float("-inf"), dtype=x.dtype, device=x.device)
    row_sum = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
    for chunk in torch.split(x, chunk_size, dim=-1):
        row_max, row_sum = online_update(row_max, row_sum, chunk)
    return torch.exp(x - row_max[..., None]) / row_sum[..., None]
