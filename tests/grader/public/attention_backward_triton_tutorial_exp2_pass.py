# quizprep: exercise=attention-backward
# expect: pass
# The arithmetic of Triton's tutorial 06-fused-attention.py backward, in PyTorch: _attn_bwd_preprocess computes
# delta = sum(o * do, axis=1); the forward stores M = m + log2(l) in base 2, with q pre-scaled by sm_scale·RCP_LN2
# (1/ln 2), so the kernels recompute p = exp2(qkT − M) and scale dk by sm_scale and dq by LN2 at the end.
# Adapter: lse (natural log) turned into the tutorial's base-2 M; key blocks of block_size (all keys when None),
# all queries at once; GQA summed per group.
from __future__ import annotations

import math

import torch

LN2 = 0.6931471824645996
RCP_LN2 = 1.4426950408889634


def attention_backward(q, k, v, o, lse, d_o, causal=False, scale=None, block_size=None):
    sm_scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    group = q.shape[1] // k.shape[1]
    qf, of, do = q.float(), o.float(), d_o.float()
    kf = k.float().repeat_interleave(group, dim=1)
    vf = v.float().repeat_interleave(group, dim=1)
    M = lse.float() * RCP_LN2  # the tutorial's base-2 row statistic
    delta = torch.sum(of * do, dim=-1)
    n, m = q.shape[-2], k.shape[-2]
    BLOCK_N = block_size or m
    offs_m = torch.arange(n, device=q.device)[:, None] + (m - n)
    dq, dk, dv = torch.zeros_like(qf), torch.zeros_like(kf), torch.zeros_like(vf)
    for start_n in range(0, m, BLOCK_N):  # _attn_bwd_dkdv's key block; dq accumulated as _attn_bwd_dq does
        kb, vb = kf[:, :, start_n:start_n + BLOCK_N], vf[:, :, start_n:start_n + BLOCK_N]
        qk = (qf * (sm_scale * RCP_LN2)) @ kb.transpose(-1, -2)
        p = torch.exp2(qk - M[..., None])
        if causal:
            offs_n = torch.arange(start_n, start_n + kb.shape[-2], device=q.device)[None, :]
            p = torch.where(offs_m >= offs_n, p, 0.0)
        dv[:, :, start_n:start_n + BLOCK_N] = p.transpose(-1, -2) @ do
        dp = do @ vb.transpose(-1, -2)
        ds = p * (dp - delta[..., None])
        dk[:, :, start_n:start_n + BLOCK_N] = (ds.transpose(-1, -2) @ qf) * sm_scale
        dq += (ds @ kb) * sm_scale  # the tutorial scales by LN2 after working with q·RCP_LN2: the same factor
    dk = dk.unflatten(1, (k.shape[1], group)).sum(2)
    dv = dv.unflatten(1, (k.shape[1], group)).sum(2)
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
