# quizprep: exercise=flash
# expect: check=dtypes diagnosis=flash-causal-skip-off-by-one
# Query tiles of block_size; the causal key loop runs range(0, last, block_size), skipping the block that starts at
# the tile's last query position.
from __future__ import annotations

import math

import torch


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False,
                    block_size: int = 64) -> torch.Tensor:
    n, m, dtype = q.shape[-2], k.shape[-2], q.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    q, k, v = q.to(work) * (1.0 / math.sqrt(q.shape[-1])), k.to(work), v.to(work)
    out = torch.empty((*q.shape[:-1], v.shape[-1]), dtype=work, device=q.device)
    for q0 in range(0, n, block_size):
        q1 = min(q0 + block_size, n)
        last = q1 - 1 + (m - n)
        positions = torch.arange(q0, q1, device=q.device).unsqueeze(-1) + (m - n)
        row_max = torch.full((*q.shape[:-2], q1 - q0, 1), float("-inf"), dtype=work, device=q.device)
        row_sum = torch.zeros_like(row_max)
        acc = torch.zeros((*q.shape[:-2], q1 - q0, v.shape[-1]), dtype=work, device=q.device)
        for start in range(0, last if causal else m, block_size):
            stop = min(start + block_size, m)
            scores = q[..., q0:q1, :] @ k[..., start:stop, :].transpose(-2, -1)
            if causal:
                keys = torch.arange(start, stop, device=q.device)
                scores = scores.masked_fill(keys > positions, float("-inf"))
            new_max = torch.maximum(row_max, scores.amax(dim=-1, keepdim=True))
            safe_max = new_max.masked_fill(torch.isneginf(new_max), 0.0)
            weights = (scores - safe_max).exp()
            rescale = (row_max - safe_max).exp()
            row_sum = row_sum * rescale + weights.sum(dim=-1, keepdim=True)
            acc = acc * rescale + weights @ v[..., start:stop, :]
            row_max = new_max
        out[..., q0:q1, :] = acc / row_sum
    return out.to(dtype)
