# quizprep: exercise=attention-backward
# expect: check=causal diagnosis=causal-offset-sign
# Two passes, masks right: the dQ pass stops each query block's key loop at its end MINUS the cache offset.
from __future__ import annotations

import torch


def attention_backward(q, k, v, o, lse, d_o, causal=False, scale=None, block_size=None):
    n, m, d = q.shape[-2], k.shape[-2], q.shape[-1]
    rep = q.shape[1] // k.shape[1]
    scale = scale if scale is not None else d ** -0.5
    acc = torch.promote_types(q.dtype, torch.float32)
    Q, Out, dO, L = q.to(acc), o.to(acc), d_o.to(acc), lse.to(acc)
    K = torch.repeat_interleave(k.to(acc), rep, dim=1)
    V = torch.repeat_interleave(v.to(acc), rep, dim=1)
    D = torch.einsum("bhid,bhid->bhi", dO, Out)
    bq = n if block_size is None else block_size
    bk = m if block_size is None else block_size
    shift = m - n

    def probs(qi, kj):
        s = torch.einsum("bhid,bhjd->bhij", Q[:, :, qi], K[:, :, kj]) * scale
        p = torch.exp(s - L[:, :, qi, None])
        if causal:
            p = p * (kj[None, :] <= qi[:, None] + shift)
        return p

    dK, dV = torch.zeros_like(K), torch.zeros_like(V)
    for k0 in range(0, m, bk):  # dK/dV pass: every query block that can see this key block
        kj = torch.arange(k0, min(k0 + bk, m), device=q.device)
        start = max(k0 - shift, 0) if causal else 0
        for q0 in range(start // bq * bq, n, bq):
            qi = torch.arange(q0, min(q0 + bq, n), device=q.device)
            p = probs(qi, kj)
            ds = p * (torch.einsum("bhid,bhjd->bhij", dO[:, :, qi], V[:, :, kj]) - D[:, :, qi, None])
            dV[:, :, kj] += torch.einsum("bhij,bhid->bhjd", p, dO[:, :, qi])
            dK[:, :, kj] += scale * torch.einsum("bhij,bhid->bhjd", ds, Q[:, :, qi])

    dQ = torch.zeros_like(Q)
    for q0 in range(0, n, bq):  # dQ pass: every key block this query block can see
        qi = torch.arange(q0, min(q0 + bq, n), device=q.device)
        stop = max(min(m, q0 + bq - shift), 0) if causal else m  # BUG
        for k0 in range(0, stop, bk):
            kj = torch.arange(k0, min(k0 + bk, m), device=q.device)
            p = probs(qi, kj)
            ds = p * (torch.einsum("bhid,bhjd->bhij", dO[:, :, qi], V[:, :, kj]) - D[:, :, qi, None])
            dQ[:, :, qi] += scale * torch.einsum("bhij,bhjd->bhid", ds, K[:, :, kj])

    b, g = k.shape[0], k.shape[1]
    dK = dK.view(b, g, rep, m, d).sum(2)
    dV = dV.view(b, g, rep, m, v.shape[-1]).sum(2)
    return dQ.to(q.dtype), dK.to(k.dtype), dV.to(v.dtype)

