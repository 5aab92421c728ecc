# quizprep: exercise=online-softmax
# expect: check=update-empty diagnosis=online-nan-masked-chunk
# online_update walks the chunk logit by logit with no guard: from the empty state, a chunk whose
# first logit is -inf gives exp(-inf - (-inf)) = NaN, even when a finite logit follows it.
from __future__ import annotations

import torch


def online_update(row_max, row_sum, chunk):
    m, s = row_max.clone(), row_sum.clone()
    for j in range(chunk.shape[-1]):
        value = chunk[..., j]
        grown = torch.maximum(m, value)
        s = s * (m - grown).exp() + (value - grown).exp()
        m = grown
    return m, s


def merge_states(max_a, sum_a, max_b, sum_b):
    top = torch.maximum(max_a, max_b)
    safe = top.nan_to_num(neginf=0.0)
    return top, sum_a * (max_a - safe).exp() + sum_b * (max_b - safe).exp()


def online_softmax(x, chunk_size):
    acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    values = x.to(acc)
    m = values.new_full(values.shape[:-1], float("-inf"))
    s = values.new_zeros(values.shape[:-1])
    for lo in range(0, values.shape[-1], chunk_size):
        block = values[..., lo:lo + chunk_size]
        top = torch.maximum(m, block.amax(dim=-1))
        safe = top.nan_to_num(neginf=0.0)
        s = s * (m - safe).exp() + (block - safe[..., None]).exp().sum(dim=-1)
        m = top
    return ((values - m[..., None]).exp() / s[..., None]).to(x.dtype)
