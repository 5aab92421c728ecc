# quizprep: exercise=flash
# style: FlashAttention-2 habits: log2(e) folded into the scale and exp2, query tiles of 32, a while loop over key tiles, the running output kept normalised against a log-sum-exp instead of (max, sum)
# expect: pass
import math

import torch

LOG2E = 1.4426950408889634
Q_TILE = 32


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False,
                    block_size: int = 64) -> torch.Tensor:
    *lead, n, d = q.shape
    m = k.shape[-2]
    work = torch.promote_types(q.dtype, torch.float32)
    qf, kf, vf = q.to(work), k.to(work), v.to(work)
    scale2 = LOG2E / math.sqrt(d)
    offset = m - n
    out = torch.empty(*lead, n, v.shape[-1], dtype=q.dtype, device=q.device)

    for q0 in range(0, n, Q_TILE):
        q1 = min(q0 + Q_TILE, n)
        qi = qf[..., q0:q1, :] * scale2
        # lse: log2 of the running sum of 2^s; acc: the output of the keys seen so far, already normalised
        lse = torch.full((*lead, q1 - q0), -math.inf, dtype=work, device=q.device)
        acc = torch.zeros(*lead, q1 - q0, v.shape[-1], dtype=work, device=q.device)
        hi = min(m, q1 + offset) if causal else m
        k0 = 0
        while k0 < hi:
            k1 = min(k0 + block_size, hi)
            s = qi @ kf[..., k0:k1, :].transpose(-1, -2)
            if causal:
                qpos = torch.arange(q0, q1, device=q.device)[:, None] + offset
                kpos = torch.arange(k0, k1, device=q.device)[None, :]
                s = s.masked_fill(kpos > qpos, -math.inf)
            c = torch.maximum(lse, s.amax(-1))
            c = torch.where(torch.isinf(c), torch.zeros_like(c), c)
            p = torch.exp2(s - c[..., None])
            old = torch.exp2(lse - c)
            total = old + p.sum(-1)
            acc = acc * (old / total)[..., None] + (p @ vf[..., k0:k1, :]) / total[..., None]
            lse = c + torch.log2(total)
            k0 = k1
        out[..., q0:q1, :] = acc.to(q.dtype)
    return out
