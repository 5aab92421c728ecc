# quizprep: exercise=attention-backward
# expect: check=gradients diagnosis=backward-lse-base
# exp2 with log2(e) folded into the scores' scale, but the natural-log lse subtracted as it is.
from __future__ import annotations

import torch

LOG2E = 1.4426950408889634


def attention_backward(q, k, v, o, lse, d_o, causal=False, scale=None, block_size=None):
    n, m = q.shape[-2], k.shape[-2]
    group = q.shape[1] // k.shape[1]
    sm_scale = q.shape[-1] ** -0.5 if scale is None else scale
    f = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype
    k_full = k.to(f).repeat_interleave(group, dim=1)
    v_full = v.to(f).repeat_interleave(group, dim=1)
    qs = q.to(f) * (sm_scale * LOG2E)
    s2 = qs @ k_full.transpose(-1, -2)
    if causal:
        visible = torch.ones(n, m, dtype=torch.bool, device=q.device).tril(diagonal=m - n)
        s2 = s2.masked_fill(~visible, float("-inf"))
    p = torch.exp2(s2 - lse.to(f)[..., None])  # BUG
    dof = d_o.to(f)
    dv = p.transpose(-1, -2) @ dof
    dp = dof @ v_full.transpose(-1, -2)
    ds = p * (dp - (dof * o.to(f)).sum(-1, keepdim=True))
    dq = (ds @ k_full) * sm_scale
    dk = (ds.transpose(-1, -2) @ q.to(f)) * sm_scale
    b, g = k.shape[:2]
    dk = dk.unflatten(1, (g, group)).sum(2)
    dv = dv.unflatten(1, (g, group)).sum(2)
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
