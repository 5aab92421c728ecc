# quizprep: exercise=flash
# expect: check=block-sizes diagnosis=flash-no-rescale
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    scale = 1 / math.sqrt(q.shape[-1])
    row_max = torch.full(q.shape[:-1] + (1,), float("-inf"), dtype=q.dtype)
    row_sum = torch.zeros_like(row_max)
    acc = torch.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for start in range(0, m, block_size):
        s = q @ k[..., start:start + block_size, :].transpose(-2, -1) * scale
        if causal:
            keys = torch.arange(start, min(start + block_size, m))
            s = s.masked_fill(keys > torch.arange(n).unsqueeze(-1) + (m - n), float("-inf"))
        row_max = torch.maximum(row_max, s.amax(-1, keepdim=True))
        p = torch.exp(s - row_max)
        row_sum = row_sum + p.sum(-1, keepdim=True)
        acc = acc + p @ v[..., start:start + block_size, :]
    return acc / row_sum
