# quizprep: exercise=flash
# Correct on the CPU, but builds its masks and buffers without device=: fails on a GPU.
# expect: check=device diagnosis=device-tensor-without-device
import math

import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    out_dtype = q.dtype
    work = torch.float64 if q.dtype == torch.float64 else torch.float32
    q, k, v = q.to(work), k.to(work), v.to(work)
    scale = 1 / math.sqrt(q.shape[-1])
    tiles = []
    for qs in range(0, n, block_size):
        qb = q[..., qs:qs + block_size, :] * scale
        rows = torch.arange(qs, min(qs + block_size, n)).unsqueeze(-1) + (m - n)
        mx = torch.full(qb.shape[:-1] + (1,), float("-inf"), dtype=q.dtype)
        den = torch.zeros_like(mx)
        o = torch.zeros(qb.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
        for ks in range(0, m, block_size):
            if causal and ks > int(rows[-1]):
                break
            s = torch.einsum("...id,...jd->...ij", qb, k[..., ks:ks + block_size, :])
            if causal:
                s = s.masked_fill(torch.arange(ks, min(ks + block_size, m)) > rows, float("-inf"))
            new = torch.maximum(mx, s.amax(-1, keepdim=True))
            safe = torch.where(torch.isinf(new), torch.zeros_like(new), new)
            p = torch.exp(s - safe)
            new_den = den * torch.exp(mx - safe) + p.sum(-1, keepdim=True)
            o = (o * den * torch.exp(mx - safe) + p @ v[..., ks:ks + block_size, :]) / new_den.clamp_min(1e-30)
            mx, den = new, new_den
        tiles.append(o)
    return torch.cat(tiles, dim=-2).to(out_dtype)
