# quizprep: exercise=attention-backward
# source: jax-ml/jax jax/experimental/pallas/ops/gpu/attention.py @ cec06d116c05f0d52adfceee3d3b730fdbcb0ce5 (_preprocess_backward_kernel: delta = sum(o * do, axis=1); mha_backward_kernel, "inspired by the triton tutorial": scan #1 per key block over query blocks from lower_bound = div(start_k * block_kv_dkv, block_q_dkv) under causal, qk *= log2(e) * sm_scale, causal_mask = span_q[:, None] >= span_k[None, :], qk = where(mask, qk, DEFAULT_MASK_VALUE), p = exp2(qk - lse), dv += p.T·do, dp = do·v.T - di, ds = p * dp * sm_scale, dk += ds.T·q; scan #2 per query block over key blocks up to cdiv((start_q + 1) * block_q_dq, block_kv_dq) under causal, dq += ds·k; lse is the forward's base-2 m_i + log2(l_i))
# style: JAX Pallas's Triton-backend FlashAttention backward: two scans in one kernel (dK/dV by key block, dQ by query block), scores kept in base 2 with log2(e) folded into the scale, masked scores set to -0.7 · finfo(float32).max, ds scaled before both products
# adapter: jnp.* / pl.* rewritten as torch.* op for op (jnp.exp2 → torch.exp2, plgpu.dot → matmul with float32 accumulation, lax.fori_loop → for); the fused grid's axis 2, which indexes key blocks in scan #1 and query blocks in scan #2 (the kernel raises ValueError unless both counts agree), split into two loops; batch and head axes vectorised; block sizes block_size (the whole n and m when None), blocks sliced at the tensors' ends instead of masked loads; the contract's natural-log lse turned into the kernel's base-2 lse (lse · log2 e); delta summed from float32 loads; the mha has no GQA, so K and V are expanded with repeat_interleave and dK, dV summed over each group; "float32" accumulators are at least float32 (float64 inputs stay float64)
# expect: fail diagnosis=causal-no-offset
# bug: as published: the causal mask (span_q >= span_k) and both causal loop bounds take query i to sit at position i, the top-left diagonal, as if q_len == kv_len; with m > n query i must see keys up to i + (m - n), so the backward drops every key past the top-left diagonal; never changed (the module was deprecated for tokamax in b74c06222f)
from __future__ import annotations

import math

import torch

DEFAULT_MASK_VALUE = -0.7 * float(torch.finfo(torch.float32).max)


def _preprocess_backward(out, do):
    work = torch.promote_types(out.dtype, torch.float32)
    # compute
    delta = torch.sum(out.to(work) * do.to(work), dim=-1)
    return delta


def mha_backward_kernel(q_ref, k_ref, v_ref, do_scaled_ref, lse_ref, delta_ref, *, sm_scale, causal,
                        block_q_dkv, block_kv_dkv, block_q_dq, block_kv_dq):
    work = torch.promote_types(q_ref.dtype, torch.float32)
    q_seq_len = q_ref.shape[-2]
    kv_seq_len = k_ref.shape[-2]
    dq_ref = torch.empty_like(q_ref)
    dk_ref = torch.empty_like(k_ref)
    dv_ref = torch.empty_like(v_ref)

    # Scan #1: dK and dV
    #   1. Load a block of K and V of size (block_kv_dkv, head_dim) in SMEM.
    #   2. Iterate through Q in chunks of (block_q_dkv, head_dim) to accumulate
    #      dK and dV.
    for start_k in range(-(-kv_seq_len // block_kv_dkv)):
        curr_k_slice = slice(start_k * block_kv_dkv, (start_k + 1) * block_kv_dkv)

        v = v_ref[..., curr_k_slice, :]
        k = k_ref[..., curr_k_slice, :]
        dv = torch.zeros(v.shape, dtype=work, device=v.device)
        dk = torch.zeros(k.shape, dtype=work, device=k.device)
        span_k = start_k * block_kv_dkv + torch.arange(k.shape[-2], device=k.device)

        lower_bound = (start_k * block_kv_dkv) // block_q_dkv if causal else 0
        for start_q in range(lower_bound, -(-q_seq_len // block_q_dkv)):
            curr_q_slice = slice(start_q * block_q_dkv, (start_q + 1) * block_q_dkv)

            q = q_ref[..., curr_q_slice, :]
            qk = torch.matmul(q.to(work), k.to(work).transpose(-2, -1))
            qk_scale = math.log2(math.e)
            if sm_scale != 1.:
                qk_scale *= sm_scale
            qk *= qk_scale

            if causal:
                span_q = start_q * block_q_dkv + torch.arange(q.shape[-2], device=q.device)
                causal_mask = span_q[:, None] >= span_k[None, :]
                mask = causal_mask
                qk = torch.where(mask, qk, DEFAULT_MASK_VALUE)

            lse = lse_ref[..., curr_q_slice]
            di = delta_ref[..., curr_q_slice]
            do = do_scaled_ref[..., curr_q_slice, :]

            p = torch.exp2(qk - lse[..., None])
            dv = dv + torch.matmul(p.to(do.dtype).transpose(-2, -1).to(work), do.to(work))
            dp = torch.zeros(qk.shape, dtype=work, device=qk.device) - di[..., None]
            dp = dp + torch.matmul(do.to(work), v.to(work).transpose(-2, -1))
            ds = p * dp
            if sm_scale != 1.0:
                ds = ds * sm_scale
            dk = dk + torch.matmul(ds.to(q_ref.dtype).transpose(-2, -1).to(work), q.to(work))

        dv_ref[..., curr_k_slice, :] = dv.to(dv_ref.dtype)
        dk_ref[..., curr_k_slice, :] = dk.to(dk_ref.dtype)

    # Scan #2: dQ
    #   1. Load a block of Q of size (block_q_dq, head_dim) in SMEM.
    #   2. Iterate through K and V in chunks of (block_kv_dq, head_dim) to
    #     accumulate dQ.
    for start_q in range(-(-q_seq_len // block_q_dq)):
        curr_q_slice = slice(start_q * block_q_dq, (start_q + 1) * block_q_dq)
        q = q_ref[..., curr_q_slice, :]
        span_q = start_q * block_q_dq + torch.arange(q.shape[-2], device=q.device)
        dq = torch.zeros(q.shape, dtype=work, device=q.device)

        lse = lse_ref[..., curr_q_slice]
        do = do_scaled_ref[..., curr_q_slice, :]
        di = delta_ref[..., curr_q_slice]

        if causal:
            upper_bound = -(-((start_q + 1) * block_q_dq) // block_kv_dq)
        else:
            upper_bound = -(-kv_seq_len // block_kv_dq)

        for start_k in range(0, upper_bound):
            curr_k_slice = slice(start_k * block_kv_dq, (start_k + 1) * block_kv_dq)
            k = k_ref[..., curr_k_slice, :]
            v = v_ref[..., curr_k_slice, :]

            qk = torch.matmul(q.to(work), k.to(work).transpose(-2, -1))
            qk_scale = math.log2(math.e)
            if sm_scale != 1.:
                qk_scale *= sm_scale
            qk *= qk_scale

            if causal:
                span_k = start_k * block_kv_dq + torch.arange(k.shape[-2], device=k.device)
                causal_mask = span_q[:, None] >= span_k[None, :]
                mask = causal_mask
                qk = torch.where(mask, qk, DEFAULT_MASK_VALUE)

            p = torch.exp2(qk - lse[..., None])
            dp = torch.zeros(qk.shape, dtype=work, device=qk.device) - di[..., None]
            dp = dp + torch.matmul(do.to(work), v.to(work).transpose(-2, -1))
            ds = p * dp
            if sm_scale != 1.0:
                ds = ds * sm_scale

            dq = dq + torch.matmul(ds.to(k.dtype).to(work), k.to(work)).to(dq.dtype)

        dq_ref[..., curr_q_slice, :] = dq.to(dq_ref.dtype)

    return dq_ref, dk_ref, dv_ref


def attention_backward(q, k, v, o, lse, d_o, causal=False, scale=None, block_size=None):
    n, m, d = q.shape[-2], k.shape[-2], q.shape[-1]
    sm_scale = d ** -0.5 if scale is None else scale
    group = q.shape[1] // k.shape[1]
    k_rep = torch.repeat_interleave(k, group, dim=1)
    v_rep = torch.repeat_interleave(v, group, dim=1)
    lse2 = lse.to(torch.promote_types(lse.dtype, torch.float32)) * math.log2(math.e)
    delta = _preprocess_backward(o, d_o)
    bq = n if block_size is None else block_size
    bk = m if block_size is None else block_size
    dq, dk, dv = mha_backward_kernel(
        q, k_rep, v_rep, d_o, lse2, delta, sm_scale=sm_scale, causal=causal,
        block_q_dkv=bq, block_kv_dkv=bk, block_q_dq=bq, block_kv_dq=bk,
    )
    B, G = k.shape[0], k.shape[1]
    dk = dk.reshape(B, G, group, m, d).sum(2)
    dv = dv.reshape(B, G, group, m, v.shape[-1]).sum(2)
    return dq, dk, dv
