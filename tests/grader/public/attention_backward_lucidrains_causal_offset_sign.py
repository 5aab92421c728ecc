# quizprep: exercise=attention-backward
# expect: fail diagnosis=causal-offset-sign
# Style of lucidrains/memory-efficient-attention-pytorch, memory_efficient_attention_pytorch/flash_attention.py,
# FlashAttentionFunction.backward ("Algorithm 4 in the paper"): query and key buckets split with .split, scores by
# einsum, the causal mask as a triu of ones filled with -finfo.max, p = exp(s - lse), D = (doc * oc).sum(-1) and
# ds = p * scale * (dp - D), each chunk added in place into dq, dk, dv. Adapter: scale and block_size from the
# contract (None: one bucket), lse given as (B, H, n), KV heads expanded for GQA and their gradients summed back.
# Its bug, kept: q_start_index = ind * q_bucket_size - qk_len_diff puts the queries BEFORE the keys when m > n
# (the forward does the same, so the pair agrees with itself), and every key of a causal query is masked.
from __future__ import annotations

import torch
from torch import einsum


def attention_backward(q, k, v, o, lse, d_o, causal=False, scale=None, block_size=None):
    group = q.shape[1] // k.shape[1]
    dtype = q.dtype
    q, o, do = q.float(), o.float(), d_o.float()
    k, v = (t.float().repeat_interleave(group, dim=1) for t in (k, v))
    lse = lse.float().unsqueeze(-1)
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    q_bucket_size = k_bucket_size = block_size or max(q.shape[-2], k.shape[-2])
    max_neg_value = -torch.finfo(q.dtype).max
    qk_len_diff = max(k.shape[-2] - q.shape[-2], 0)

    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    row_splits = zip(q.split(q_bucket_size, dim=-2), o.split(q_bucket_size, dim=-2),
                     do.split(q_bucket_size, dim=-2), lse.split(q_bucket_size, dim=-2),
                     dq.split(q_bucket_size, dim=-2))
    for ind, (qc, oc, doc, lsec, dqc) in enumerate(row_splits):
        q_start_index = ind * q_bucket_size - qk_len_diff
        col_splits = zip(k.split(k_bucket_size, dim=-2), v.split(k_bucket_size, dim=-2),
                         dk.split(k_bucket_size, dim=-2), dv.split(k_bucket_size, dim=-2))
        for k_ind, (kc, vc, dkc, dvc) in enumerate(col_splits):
            k_start_index = k_ind * k_bucket_size
            attn_weights = einsum("... i d, ... j d -> ... i j", qc, kc) * scale
            if causal and q_start_index < (k_start_index + k_bucket_size - 1):
                causal_mask = torch.ones((qc.shape[-2], kc.shape[-2]), dtype=torch.bool,
                                         device=q.device).triu(q_start_index - k_start_index + 1)
                attn_weights.masked_fill_(causal_mask, max_neg_value)
            p = torch.exp(attn_weights - lsec)
            dv_chunk = einsum("... i j, ... i d -> ... j d", p, doc)
            dp = einsum("... i d, ... j d -> ... i j", doc, vc)
            D = (doc * oc).sum(dim=-1, keepdims=True)
            ds = p * scale * (dp - D)
            dqc.add_(einsum("... i j, ... j d -> ... i d", ds, kc))
            dkc.add_(einsum("... i j, ... i d -> ... j d", ds, qc))
            dvc.add_(dv_chunk)

    b, g, m, d = k.shape[0], k.shape[1] // group, k.shape[2], k.shape[3]
    dk = dk.reshape(b, g, group, m, d).sum(2)
    dv = dv.reshape(b, g, group, m, d).sum(2)
    return dq.to(dtype), dk.to(dtype), dv.to(dtype)
