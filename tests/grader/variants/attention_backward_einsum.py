# quizprep: exercise=attention-backward
# expect: pass
# Correct: whole matrices with einsum, KV heads read through a (B, G, H/G, ...) view instead of being
# repeated, so dK and dV come out per KV head from the einsum's own sum over the group; block_size ignored
# only when None (tiles of keys otherwise).
from __future__ import annotations

import torch


def attention_backward(q, k, v, o, lse, d_o, causal=False, scale=None, block_size=None):
    batch, heads, n, d = q.shape
    kv_heads, m = k.shape[1], k.shape[2]
    scale = d ** -0.5 if scale is None else scale
    work = torch.promote_types(q.dtype, torch.float32)
    qg = q.to(work).view(batch, kv_heads, heads // kv_heads, n, d)
    og, dog = (t.to(work).view(batch, kv_heads, heads // kv_heads, n, d) for t in (o, d_o))
    kw, vw = k.to(work), v.to(work)
    lse_g = lse.to(work).view(batch, kv_heads, heads // kv_heads, n, 1)
    delta = (dog * og).sum(-1, keepdim=True)
    dq, dk, dv = torch.zeros_like(qg), torch.zeros_like(kw), torch.zeros_like(vw)
    step = block_size or m
    for start in range(0, m, step):
        kb, vb = kw[:, :, start:start + step], vw[:, :, start:start + step]
        p = torch.exp(torch.einsum("bghid,bgjd->bghij", qg, kb) * scale - lse_g)
        if causal:
            keys = torch.arange(start, start + kb.shape[2], device=q.device)
            p = p.masked_fill(keys[None, :] > torch.arange(n, device=q.device)[:, None] + (m - n), 0.0)
        dv[:, :, start:start + step] = torch.einsum("bghij,bghid->bgjd", p, dog)
        ds = p * (torch.einsum("bghid,bgjd->bghij", dog, vb) - delta)
        dq += torch.einsum("bghij,bgjd->bghid", ds, kb) * scale
        dk[:, :, start:start + step] = torch.einsum("bghij,bghid->bgjd", ds, qg) * scale
    return dq.reshape(q.shape).to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
