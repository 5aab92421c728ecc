# quizprep: exercise=attention-backward
# source: a one-line slip on FlagOpen/FlagAttention src/flag_attn/flash.py @ ee91638dec6da8c00c4113d179f469e0ffcd5852 (FlashAttention.backward without dropout: P_SEQ = N - M, _bwd_preprocess delta = sum(o * do) in float32; _bwd_kv_kernel per key tile: lo = max(start_n * BLOCK_N - P_SEQ, 0) rounded down to BLOCK_M under causal, p = exp2(s * qk_scale - l * log2e), p and ds zeroed where (P_SEQ + offs_m) < offs_n, dv += p.T·do, ds = p * (dp - delta), dk += ds.T·q, dk *= sm_scale; _bwd_q_kernel per query tile: hi = min(N, P_SEQ + (start_m + 1) * BLOCK_M) (max(0, hi) when M > N), dq += ds·k, dq *= sm_scale; dk and dv computed per query head, then reshape((B, Hk, num_groups, N, D)).sum(2))
# style: a Triton FlashAttention-2 backward in two kernels transcribed to PyTorch: one pass over key tiles for dK/dV and a second over query tiles for dQ, P recomputed from the natural-log lse in base 2, bottom-right causal offset P_SEQ built into both loop bounds, GQA gradients summed over the group after the kernels
# adapter: tl.* rewritten as torch.* op for op (tl.math.exp2 → torch.exp2, tl.dot → matmul with float32 accumulation, tl.where → torch.where); the grid's batch and head axes vectorised and its tile axis a Python loop; the kernels' K/V pointer for head off_h (off_h // num_groups) read as the tile's k[..., offs_n, :][:, head // num_groups]; BLOCK_M = BLOCK_N = block_size (the whole n and m when None) and tiles sliced at the tensors' ends instead of masked loads; the contract's scale passed as sm_scale (1/√d when None) and its lse as L; the dropout path left out; "float32" accumulators are at least float32 (float64 inputs stay float64)
# expect: fail diagnosis=backward-lse-base
# bug: slip of ours: in the dK/dV kernel p = exp2(s * qk_scale - l) subtracts the natural-log lse in the base-2 exponent without its log2(e) factor, so the recomputed P there is off by the factor exp(l · (1 - log2 e)) per row (dQ's kernel keeps l * log2e)
from __future__ import annotations

import math

import torch


def _bwd_preprocess(o, do):
    # compute (Out * Dout).sum() for vector interpretation
    work = torch.promote_types(o.dtype, torch.float32)
    delta = torch.sum(o.to(work) * do.to(work), dim=-1)
    return delta


def _bwd_kv_kernel(q, k, v, sm_scale, do, dk, dv, L, D, P_SEQ, num_groups, BLOCK_M, BLOCK_N, CAUSAL, start_n):
    input_dtype = q.dtype
    acc_dtype = torch.promote_types(input_dtype, torch.float32)
    M, N = q.shape[-2], k.shape[-2]
    H = q.shape[1]
    log2e = 1.4426950408889634
    qk_scale = sm_scale * log2e

    # offset pointers for (batch, head)
    off_hk = torch.arange(H, device=q.device) // num_groups

    if CAUSAL:
        lo = max(start_n * BLOCK_N - P_SEQ, 0)
        lo = (lo // BLOCK_M) * BLOCK_M
    else:
        lo = 0

    offs_n = torch.arange(start_n * BLOCK_N, min((start_n + 1) * BLOCK_N, N), device=q.device)

    # k and v stay in SRAM throughout
    k_t = k[..., offs_n, :][:, off_hk].to(acc_dtype)
    v_t = v[..., offs_n, :][:, off_hk].to(acc_dtype)

    # initialize dk amd dv
    dk_acc = torch.zeros(q.shape[:2] + (offs_n.shape[0], k.shape[-1]), dtype=acc_dtype, device=q.device)
    dv_acc = torch.zeros(q.shape[:2] + (offs_n.shape[0], v.shape[-1]), dtype=acc_dtype, device=q.device)

    # loop over a col
    for start_m in range(lo, M, BLOCK_M):
        offs_m = torch.arange(start_m, min(start_m + BLOCK_M, M), device=q.device)
        causal_mask = (P_SEQ + offs_m[:, None]) >= (offs_n[None, :])  # (BLOCK_M, BLOCK_N)

        q_t = q[..., offs_m, :].to(acc_dtype)
        # recompute p = softmax(qk * sm_scale, dim=-1)
        s = torch.matmul(q_t, k_t.transpose(-2, -1))

        # -- recompute p ---
        l = L[..., offs_m].to(acc_dtype)
        p = torch.exp2(s * qk_scale - l[..., None])  # (BLOCK_M, BLOCK_N)

        if CAUSAL:
            p = torch.where(causal_mask, p, 0.0)

        # compute dv = dot(p, do)
        do_t = do[..., offs_m, :]
        dv_acc += torch.matmul(p.transpose(-2, -1).to(input_dtype).to(acc_dtype), do_t.to(acc_dtype))

        # compute dp = dot(v, do)
        delta = D[..., offs_m]
        dp = torch.matmul(do_t.to(acc_dtype), v_t.transpose(-2, -1))

        # compute ds = p * (dp - delta[:, None])
        ds = p * (dp - delta[..., None])  # (BLOCK_M, BLOCK_N)

        if CAUSAL:
            ds = torch.where(causal_mask, ds, 0.0)
        ds = ds.to(input_dtype)

        # compute dk = dot(ds.T, q) masking
        dk_acc += torch.matmul(ds.transpose(-2, -1).to(acc_dtype), q_t)

    dk_acc *= sm_scale
    dk[..., offs_n, :] = dk_acc.to(input_dtype)
    dv[..., offs_n, :] = dv_acc.to(input_dtype)


def _bwd_q_kernel(q, k, v, sm_scale, do, dq, L, D, P_SEQ, num_groups, BLOCK_M, BLOCK_N, CAUSAL, LARGER_M, start_m):
    input_dtype = q.dtype
    acc_dtype = torch.promote_types(input_dtype, torch.float32)
    M, N = q.shape[-2], k.shape[-2]
    H = q.shape[1]

    # scale sm_scale by log_2(e) and use
    # 2^x instead of exp in the loop because CSE and LICM
    # don't work as expected with `exp` in the loop
    log2e = 1.4426950408889634
    qk_scale = sm_scale * log2e

    # offset pointers for (batch, head)
    off_hk = torch.arange(H, device=q.device) // num_groups

    offs_m = torch.arange(start_m * BLOCK_M, min((start_m + 1) * BLOCK_M, M), device=q.device)

    # load q: it will stay in SRAM throughout
    q_t = q[..., offs_m, :].to(acc_dtype)
    do_t = do[..., offs_m, :]
    delta = D[..., offs_m]
    l = L[..., offs_m].to(acc_dtype)

    # initialize dq
    dq_acc = torch.zeros(q.shape[:2] + (offs_m.shape[0], q.shape[-1]), dtype=acc_dtype, device=q.device)

    # loop over k, v and update accumulator
    # see note "Loop-Bound-For-N"
    if CAUSAL:
        hi = min(N, P_SEQ + (start_m + 1) * BLOCK_M)
        if LARGER_M:
            hi = max(0, hi)
    else:
        hi = N

    # loop over a row
    for start_n in range(0, hi, BLOCK_N):
        offs_n = torch.arange(start_n, min(start_n + BLOCK_N, N), device=q.device)

        # load k1, k2, v on chip
        k_t = k[..., offs_n, :][:, off_hk]
        v_t = v[..., offs_n, :][:, off_hk]

        # recompute p = softmax(qk * sm_scale, dim=-1)
        if CAUSAL:
            causal_mask = (P_SEQ + offs_m[:, None]) >= (offs_n[None, :])  # (BLOCK_M, BLOCK_N)
        s = torch.matmul(q_t, k_t.to(acc_dtype).transpose(-2, -1))

        p = torch.exp2(s * qk_scale - l[..., None] * log2e)  # (BLOCK_M, BLOCK_N)

        # compute dp = dot(v, do)
        dp = torch.matmul(do_t.to(input_dtype).to(acc_dtype), v_t.to(acc_dtype).transpose(-2, -1))

        # compute ds = p * (dp - delta[:, None])
        # move scale out to dq at last
        ds = p * (dp - delta[..., None])  # (BLOCK_M, BLOCK_N)

        # mask ds to ensure no small values
        if CAUSAL:
            ds = torch.where(causal_mask, ds, 0.0)

        dq_acc += torch.matmul(ds.to(input_dtype).to(acc_dtype), k_t.to(acc_dtype))

    dq_acc *= sm_scale
    dq[..., offs_m, :] = dq_acc.to(input_dtype)


def attention_backward(q, k, v, o, lse, d_o, causal=False, scale=None, block_size=None):
    B, H, M, D = q.shape
    N = k.shape[2]
    Hk = k.shape[1]
    num_groups = H // Hk
    P_SEQ = N - M
    larger_m = M > N

    sm_scale = scale
    if sm_scale is None:
        sm_scale = 1. / math.sqrt(D)

    BLOCK_M = M if block_size is None else block_size
    BLOCK_N = N if block_size is None else block_size

    delta = _bwd_preprocess(o, d_o)

    # NOTE that dk & dv always have the same number of heads as q, instead of q.
    dk = torch.empty((B, H, N, D), dtype=k.dtype, device=q.device)
    dv = torch.empty((B, H, N, v.shape[-1]), dtype=v.dtype, device=q.device)
    for start_n in range(math.ceil(N / BLOCK_N)):
        _bwd_kv_kernel(q, k, v, sm_scale, d_o, dk, dv, lse, delta, P_SEQ, num_groups, BLOCK_M, BLOCK_N, causal,
                       start_n)

    dq = torch.zeros_like(q)
    for start_m in range(math.ceil(M / BLOCK_M)):
        _bwd_q_kernel(q, k, v, sm_scale, d_o, dq, lse, delta, P_SEQ, num_groups, BLOCK_M, BLOCK_N, causal,
                      larger_m, start_m)
    dk = dk.reshape((B, Hk, num_groups, N, D)).sum(2)
    dv = dv.reshape((B, Hk, num_groups, N, v.shape[-1])).sum(2)
    return dq, dk, dv
