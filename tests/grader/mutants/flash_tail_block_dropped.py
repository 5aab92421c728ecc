# quizprep: exercise=flash
# expect: check=block-sizes diagnosis=flash-tail-block-dropped
# Only whole blocks: the loop stops before a last, shorter block.
from __future__ import annotations

import math

import torch


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False,
                    block_size: int = 64) -> torch.Tensor:
    n, m, dtype = q.shape[-2], k.shape[-2], q.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    q, k, v = q.to(work) * (1.0 / math.sqrt(q.shape[-1])), k.to(work), v.to(work)
    row_max = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=work, device=q.device)
    row_sum = torch.zeros_like(row_max)
    acc = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=work, device=q.device)
    positions = torch.arange(n, device=q.device).unsqueeze(-1) + (m - n)
    for start in range(0, m - block_size + 1, block_size):
        stop = start + block_size
        scores = q @ k[..., start:stop, :].transpose(-2, -1)
        if causal and stop - 1 > m - n:  # blocks wholly at or before the first query need no mask
            keys = torch.arange(start, stop, device=q.device)
            scores = scores.masked_fill(keys > positions, float("-inf"))
        new_max = torch.maximum(row_max, scores.amax(dim=-1, keepdim=True))
        safe_max = new_max.masked_fill(torch.isneginf(new_max), 0.0)  # rows with nothing visible yet
        weights = (scores - safe_max).exp()
        rescale = (row_max - safe_max).exp()
        row_sum = row_sum * rescale + weights.sum(dim=-1, keepdim=True)
        acc = acc * rescale + weights @ v[..., start:stop, :]
        row_max = new_max
    return (acc / row_sum).to(dtype)
