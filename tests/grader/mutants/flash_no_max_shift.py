# quizprep: exercise=flash
# expect: check=stability diagnosis=no-max-shift
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    scale = 1 / math.sqrt(q.shape[-1])
    total = torch.zeros(q.shape[:-1] + (1,), dtype=q.dtype)
    acc = torch.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for start in range(0, m, block_size):
        s = q @ k[..., start:start + block_size, :].transpose(-2, -1) * scale
        if causal:
            keys = torch.arange(start, min(start + block_size, m))
            s = s.masked_fill(keys > torch.arange(n).unsqueeze(-1) + (m - n), float("-inf"))
        p = s.exp()  # no running maximum: exp(100) is inf in float32  # BUG
        total = total + p.sum(-1, keepdim=True)
        acc = acc + p @ v[..., start:start + block_size, :]
    return acc / total
