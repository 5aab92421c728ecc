# quizprep: exercise=attention-backward
# expect: check=memory diagnosis=backward-materialised-scores unread=block_size
# block_size ignored: all n x m scores at once.
from __future__ import annotations

import math

import torch


def attention_backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor, lse: torch.Tensor,
                       d_o: torch.Tensor, causal: bool = False, scale: float | None = None,
                       block_size: int | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    n, m = q.shape[-2], k.shape[-2]
    group = q.shape[1] // k.shape[1]
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    work = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype
    qw, ow, dow = q.to(work), o.to(work), d_o.to(work)
    kw, vw = (t.to(work).repeat_interleave(group, dim=1) for t in (k, v))
    lse = lse.to(work).unsqueeze(-1)
    delta = (dow * ow).sum(dim=-1, keepdim=True)  # D = rowsum(dO ∘ O)
    dq, dk, dv = torch.zeros_like(qw), torch.zeros_like(kw), torch.zeros_like(vw)
    step = m  # BUG
    rows = torch.arange(n, device=q.device).unsqueeze(-1) + (m - n)
    for start in range(0, m, step):  # key blocks, as FlashAttention-2's outer loop
        stop = min(start + step, m)
        kb, vb = kw[:, :, start:stop], vw[:, :, start:stop]
        p = torch.exp(scale * (qw @ kb.transpose(-2, -1)) - lse)
        if causal:
            p = p.masked_fill(torch.arange(start, stop, device=q.device) > rows, 0.0)
        dv[:, :, start:stop] = p.transpose(-2, -1) @ dow
        ds = p * (dow @ vb.transpose(-2, -1) - delta)
        dq += scale * ds @ kb
        dk[:, :, start:stop] = scale * ds.transpose(-2, -1) @ qw
    shape = (k.shape[0], k.shape[1], group, m, k.shape[-1])
    dk, dv = dk.reshape(shape).sum(dim=2), dv.reshape(shape).sum(dim=2)
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
