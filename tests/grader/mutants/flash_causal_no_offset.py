# quizprep: exercise=flash
# expect: check=causal-cache diagnosis=causal-no-offset
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    q = q * (1 / math.sqrt(q.shape[-1]))
    row_max = torch.full(q.shape[:-1] + (1,), float("-inf"), dtype=q.dtype)
    row_sum = torch.zeros_like(row_max)
    acc = torch.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    query_pos = torch.arange(n).unsqueeze(-1)  # as if the queries were the first n positions  # BUG
    for start in range(0, m, block_size):
        s = q @ k[..., start:start + block_size, :].transpose(-2, -1)
        if causal:
            s = s.masked_fill(torch.arange(start, min(start + block_size, m)) > query_pos, float("-inf"))
        new_max = torch.maximum(row_max, s.amax(-1, keepdim=True))
        safe = torch.where(torch.isinf(new_max), torch.zeros_like(new_max), new_max)
        p = torch.exp(s - safe)
        alpha = torch.exp(row_max - safe)
        row_sum = row_sum * alpha + p.sum(-1, keepdim=True)
        acc = acc * alpha + p @ v[..., start:start + block_size, :]
        row_max = new_max
    return acc / row_sum
