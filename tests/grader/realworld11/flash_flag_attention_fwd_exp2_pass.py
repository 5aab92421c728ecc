# quizprep: exercise=flash
# source: FlagOpen/FlagAttention src/flag_attn/flash.py @ ee91638dec6da8c00c4113d179f469e0ffcd5852 (FlashAttention.forward without split-kv and dropout: P_SEQ = N - M, larger_m = M > N, a grid of query tiles; _fwd_kernel: qk_scale = sm_scale * log2e, m_i = -inf, l_i = 0, acc = 0 in float32, hi = min(N, P_SEQ + (start_m + 1) * BLOCK_M) under causal (max(0, hi) when M > N), s = q·kᵀ, causal_mask = (P_SEQ + offs_m) >= offs_n, alpha = exp2((m_i - m_i_new) * qk_scale), p = exp2(s * qk_scale - m_i_new * qk_scale), acc = acc * alpha + p.to(input_dtype)·v, l_i = l_i * alpha + sum(p); rows with no key (offs_m + P_SEQ < 0) written as 0, the others acc / l_i)
# style: a Triton FlashAttention-2 forward transcribed to PyTorch: the running max kept on raw (unscaled) scores with the scale and log2(e) folded into exp2, causal keys cut at the tile's bottom-right diagonal by the loop bound plus an element mask, p rounded to the input dtype before the P·V product
# adapter: tl.* rewritten as torch.* op for op (tl.math.exp2 → torch.exp2, tl.dot → matmul with float32 accumulation); the program grid's batch and head axes vectorised (leading dims of q, k, v), its query-tile axis a Python loop; BLOCK_M = BLOCK_N = block_size and tiles sliced at the tensors' ends instead of masked loads; the Dot-I trick (an identity matmul that keeps q in registers) and the dropout path left out; "float32" accumulators are at least float32 (float64 inputs stay float64)
# expect: pass
from __future__ import annotations

import math

import torch


def _fwd_kernel(q, k, v, sm_scale, o, P_SEQ, start_m, BLOCK_M, BLOCK_N, IS_CAUSAL, LARGER_M):
    input_dtype = q.dtype
    acc_dtype = torch.promote_types(input_dtype, torch.float32)
    M, N = q.shape[-2], k.shape[-2]

    # scale sm_scale by log_2(e) and use
    # 2^x instead of exp in the loop because CSE and LICM
    # don't work as expected with `exp` in the loop
    log2e = 1.4426950408889634
    qk_scale = sm_scale * log2e

    offs_m = torch.arange(start_m * BLOCK_M, min((start_m + 1) * BLOCK_M, M), device=q.device)

    # initialize pointer to m and l, fp32 for accumulators
    m_i = torch.full(q.shape[:-2] + (offs_m.shape[0],), float("-inf"), dtype=acc_dtype, device=q.device)
    l_i = torch.zeros(q.shape[:-2] + (offs_m.shape[0],), dtype=acc_dtype, device=q.device)
    acc = torch.zeros(q.shape[:-2] + (offs_m.shape[0], v.shape[-1]), dtype=acc_dtype, device=q.device)

    # load q
    q_tile = q[..., offs_m, :]

    if IS_CAUSAL:
        hi = min(N, P_SEQ + (start_m + 1) * BLOCK_M)
        if LARGER_M:
            hi = max(0, hi)
    else:
        hi = N

    # loop over k, v and update accumulators
    for start_n in range(0, hi, BLOCK_N):
        offs_n = torch.arange(start_n, min(start_n + BLOCK_N, N), device=q.device)

        # -- load k, v --
        k_tile = k[..., offs_n, :]
        v_tile = v[..., offs_n, :]

        # -- compute qk ---
        s = torch.matmul(q_tile.to(acc_dtype), k_tile.to(acc_dtype).transpose(-2, -1))

        if IS_CAUSAL:
            causal_mask = (P_SEQ + offs_m[:, None]) >= offs_n[None, :]
            s = torch.where(causal_mask, s, float("-inf"))

        # -- compute scaling constant ---
        m_i_new = torch.maximum(m_i, s.amax(dim=-1))
        alpha = torch.exp2((m_i - m_i_new) * qk_scale)
        p = torch.exp2(s * qk_scale - m_i_new[..., None] * qk_scale)

        # -- compute partial sumexpn before applying dropout
        p_sum = torch.sum(p, dim=-1)

        # -- scale and update acc: acc *= alpha[:, None]--
        acc *= alpha[..., None]
        acc += torch.matmul(p.to(input_dtype).to(acc_dtype), v_tile.to(acc_dtype))

        # -- update m_i and l_i --
        l_i = l_i * alpha + p_sum
        m_i = m_i_new

    # write back l & o
    if IS_CAUSAL and LARGER_M:
        is_empty_line = (offs_m + P_SEQ) < 0
        acc = torch.where(is_empty_line[:, None], 0.0, acc * (1.0 / l_i[..., None]))
    else:
        acc = acc * (1.0 / l_i[..., None])

    o[..., offs_m, :] = acc.to(input_dtype)


def flash_attention(q, k, v, *, causal=False, block_size=64):
    M, D = q.shape[-2], q.shape[-1]
    N = k.shape[-2]
    P_SEQ = N - M
    larger_m = M > N
    sm_scale = 1. / math.sqrt(D)

    BLOCK_M = BLOCK_N = block_size
    o = torch.empty(q.shape[:-1] + v.shape[-1:], dtype=q.dtype, device=q.device)
    for start_m in range(math.ceil(M / BLOCK_M)):
        _fwd_kernel(q, k, v, sm_scale, o, P_SEQ, start_m, BLOCK_M, BLOCK_N, causal, larger_m)
    return o
