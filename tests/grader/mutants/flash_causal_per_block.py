# quizprep: exercise=flash
# expect: check=causal diagnosis=flash-causal-per-block
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    scale = 1 / math.sqrt(q.shape[-1])
    out = torch.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for qs in range(0, n, block_size):
        qb = q[..., qs:qs + block_size, :]
        last_query = min(qs + block_size, n) - 1 + (m - n)
        mx = torch.full(qb.shape[:-1] + (1,), float("-inf"), dtype=q.dtype)
        den = torch.zeros_like(mx)
        acc = torch.zeros(qb.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
        for ks in range(0, m, block_size):
            if causal and ks > last_query:
                break  # tiles in the future are skipped, but the diagonal tile is not masked
            s = qb @ k[..., ks:ks + block_size, :].transpose(-2, -1) * scale
            new = torch.maximum(mx, s.amax(-1, keepdim=True))
            p = (s - new).exp()
            c = (mx - new).exp()
            den = den * c + p.sum(-1, keepdim=True)
            acc = acc * c + p @ v[..., ks:ks + block_size, :]
            mx = new
        out[..., qs:qs + block_size, :] = acc / den
    return out
