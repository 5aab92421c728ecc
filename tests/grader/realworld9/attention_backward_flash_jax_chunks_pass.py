# quizprep: exercise=attention-backward
# source: lucidrains/flash-attention-jax flash_attention_jax/flash_attention.py @ 069f44d14ae737ff6eba7ed04c40c104d79b9f07 (flash_attention_backward: lax.scan over query chunks; _query_chunk_flash_attention_backward: lax.scan over key chunks, p = exp(q_scaled kᵀ - lse), p masked by key_mask, D = sum(do * o), ds = p * scale * (dp - D), dk = dsᵀ q with the unscaled q)
# style: a JAX port in sequence-first 'n b h d' layout: einsum everywhere, query chunks outside and key chunks inside, dk and dv of each key chunk concatenated
# adapter: lax.scan written as Python loops and lax.dynamic_slice as slicing; einops rearranges as permute; the key padding mask replaced by a per-chunk (i, j) mask built from positions so it can carry causality (keys up to i + m - n); scale from the contract (the repo hard-codes 1/√d); chunk sizes from block_size; KV heads expanded for GQA and their gradients summed back
# expect: pass
from __future__ import annotations

import math

import torch


def _query_chunk_flash_attention_backward(q, k, v, key_mask, o, do, lse, scale, k_chunk_size):
    """key_mask(start, stop): the adapter's (i, j) mask of this query chunk over keys start … stop − 1."""
    k_len = k.shape[0]
    q_scaled = q * scale

    dq = torch.zeros_like(q)
    dk_chunks, dv_chunks = [], []
    for chunk_idx in range(0, k_len, k_chunk_size):  # lax.scan over key chunks
        k_chunk = k[chunk_idx:chunk_idx + k_chunk_size]
        v_chunk = v[chunk_idx:chunk_idx + k_chunk_size]
        key_mask_chunk = key_mask(chunk_idx, chunk_idx + k_chunk.shape[0])

        attn_weights = torch.einsum('i...d,j...d->i...j', q_scaled, k_chunk)

        p = torch.exp(attn_weights - lse)

        key_mask_chunk = key_mask_chunk[:, None, None, :]  # rearrange(key_mask_chunk, 'j b -> 1 b 1 j'), per query
        p = torch.where(key_mask_chunk, p, 0.)

        dv_chunk = torch.einsum('i...j,i...d->j...d', p, do)
        dp = torch.einsum('i...d,j...d->i...j', do, v_chunk)

        D = torch.sum(do * o, dim=-1, keepdim=True)
        ds = p * scale * (dp - D)

        dq_chunk = torch.einsum('i...j,j...d->i...d', ds, k_chunk)
        dk_chunk = torch.einsum('i...j,i...d->j...d', ds, q)

        dq = dq + dq_chunk
        dk_chunks.append(dk_chunk)
        dv_chunks.append(dv_chunk)

    return dq, torch.cat(dk_chunks), torch.cat(dv_chunks)


def flash_attention_backward(q, k, v, key_mask, o, lse, do, scale, chunk_size):
    q_len = q.shape[2]
    lse = lse.permute(2, 0, 1)[..., None]  # rearrange(lse, 'b h n -> n b h 1')
    q, k, v, o, do = (t.permute(2, 0, 1, 3) for t in (q, k, v, o, do))  # 'b h n d -> n b h d'

    dk = torch.zeros_like(k)
    dv = torch.zeros_like(v)
    dq_chunks = []
    for chunk_idx in range(0, q_len, chunk_size):  # lax.scan over query chunks
        q_chunk = q[chunk_idx:chunk_idx + chunk_size]
        lse_chunk = lse[chunk_idx:chunk_idx + chunk_size]
        o_chunk = o[chunk_idx:chunk_idx + chunk_size]
        do_chunk = do[chunk_idx:chunk_idx + chunk_size]
        rows = torch.arange(chunk_idx, chunk_idx + q_chunk.shape[0], device=q.device)
        def mask_chunk(start, stop, rows=rows):
            return key_mask(rows, torch.arange(start, stop, device=q.device))

        dq_chunk, dk_chunk, dv_chunk = _query_chunk_flash_attention_backward(
            q_chunk, k, v, mask_chunk, o_chunk, do_chunk, lse_chunk, scale, chunk_size)
        dk, dv = dk + dk_chunk, dv + dv_chunk
        dq_chunks.append(dq_chunk)

    dq = torch.cat(dq_chunks).permute(1, 2, 0, 3)
    dk, dv = (t.permute(1, 2, 0, 3) for t in (dk, dv))
    return dq, dk, dv


def attention_backward(q, k, v, o, lse, d_o, causal=False, scale=None, block_size=None):
    group = q.shape[1] // k.shape[1]
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    n, m = q.shape[-2], k.shape[-2]
    kf = k.float().repeat_interleave(group, dim=1)
    vf = v.float().repeat_interleave(group, dim=1)
    def key_mask(rows, cols):  # built per chunk: an (n, m) mask would hold as many entries as the scores
        if not causal:
            return torch.ones(len(rows), len(cols), dtype=torch.bool, device=q.device)
        return cols[None, :] <= rows[:, None] + (m - n)
    dq, dk, dv = flash_attention_backward(q.float(), kf, vf, key_mask, o.float(), lse.float(), d_o.float(), scale,
                                          block_size or max(n, m))
    dk = dk.unflatten(1, (k.shape[1], group)).sum(2)
    dv = dv.unflatten(1, (k.shape[1], group)).sum(2)
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
