# quizprep: exercise=flash-triton
# source: FlagOpen/FlagGems, src/flag_gems/ops/attention.py at 04e49e0 (_attn_fwd_inner and _attn_fwd,
# "modified from the Triton tutorial": two stages, plain pointers, exp2 with LOG2E kept apart from the
# scale, -1e6 for masked scores, l_i started at 1). Adapted: the attention mask, fp8 and autotuning dropped;
# the key mask advanced with each tile and the off-band max taken in log2 units like the diagonal stage's
# (as published, the mask stays the first tile's and the off-band max is in natural units); the lse
# stored; the launcher is a thin adapter to (B, H, n, d) and lse (B, H, n).
import torch
import triton
import triton.language as tl


@triton.jit
def _attn_fwd_inner(
    acc, l_i, m_i, q, K_block_ptr, V_block_ptr,
    stride_k_seqlen, stride_v_seqlen,
    start_m, qk_scale,
    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr,
    offs_m: tl.constexpr, offs_n: tl.constexpr, KV_CTX: tl.constexpr,
):
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
    else:
        lo, hi = 0, KV_CTX
    K_block_ptr += lo * stride_k_seqlen
    V_block_ptr += lo * stride_v_seqlen
    LOG2E: tl.constexpr = 1.44269504
    for start_n in range(lo, hi, BLOCK_N):
        kv_load_mask = start_n + offs_n < KV_CTX
        k = tl.load(K_block_ptr, mask=kv_load_mask[None, :], other=0.0)
        qk = tl.dot(q, k, input_precision="ieee")
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale * LOG2E + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            qk = qk * qk_scale * LOG2E + tl.where(kv_load_mask[None, :], 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk = qk - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V_block_ptr, mask=kv_load_mask[:, None], other=0.0)
        p = p.to(v.dtype)
        acc = tl.dot(p, v, acc, input_precision="ieee")
        m_i = m_ij
        K_block_ptr += BLOCK_N * stride_k_seqlen
        V_block_ptr += BLOCK_N * stride_v_seqlen
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(
    Q, K, V, sm_scale, Out, Lse,
    stride_q_batch, stride_q_head, stride_q_seqlen, stride_q_headsize,
    stride_k_batch, stride_k_head, stride_k_seqlen, stride_k_headsize,
    stride_v_batch, stride_v_head, stride_v_seqlen, stride_v_headsize,
    stride_o_batch, stride_o_head, stride_o_seqlen, stride_o_headsize,
    Z, q_numhead, Q_CTX, KV_CTX,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    batch_id = off_hz // q_numhead
    head_id = off_hz % q_numhead
    q_offset = batch_id.to(tl.int64) * stride_q_batch + head_id.to(tl.int64) * stride_q_head
    k_offset = batch_id.to(tl.int64) * stride_k_batch + head_id.to(tl.int64) * stride_k_head
    v_offset = batch_id.to(tl.int64) * stride_v_batch + head_id.to(tl.int64) * stride_v_head
    o_offset = batch_id.to(tl.int64) * stride_o_batch + head_id.to(tl.int64) * stride_o_head
    offs_headsize = tl.arange(0, HEAD_DIM)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    q_load_mask = offs_m < Q_CTX
    offs_n = tl.arange(0, BLOCK_N)
    Q_block_ptr = Q + q_offset + offs_m[:, None] * stride_q_seqlen + offs_headsize[None, :] * stride_q_headsize
    K_block_ptr = K + k_offset + offs_n[None, :] * stride_k_seqlen + offs_headsize[:, None] * stride_k_headsize
    V_block_ptr = V + v_offset + offs_n[:, None] * stride_v_seqlen + offs_headsize[None, :] * stride_v_headsize
    O_block_ptr = Out + o_offset + offs_m[:, None] * stride_o_seqlen + offs_headsize[None, :] * stride_o_headsize
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale
    q = tl.load(Q_block_ptr, mask=q_load_mask[:, None], other=0.0)
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(
            acc, l_i, m_i, q, K_block_ptr, V_block_ptr, stride_k_seqlen, stride_v_seqlen,
            start_m, qk_scale, BLOCK_M, HEAD_DIM, BLOCK_N, 4 - STAGE, offs_m, offs_n, KV_CTX,
        )
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(
            acc, l_i, m_i, q, K_block_ptr, V_block_ptr, stride_k_seqlen, stride_v_seqlen,
            start_m, qk_scale, BLOCK_M, HEAD_DIM, BLOCK_N, 2, offs_m, offs_n, KV_CTX,
        )
    acc = acc / l_i[:, None]
    tl.store(Lse + off_hz * Q_CTX + offs_m, (m_i + tl.math.log2(l_i)) * 0.6931471805599453, mask=q_load_mask)
    tl.store(O_block_ptr, acc.to(Out.type.element_ty), mask=q_load_mask[:, None])


def flash_attention(query, key, value, causal=False):
    HEAD_DIM_Q, HEAD_DIM_K = query.shape[-1], key.shape[-1]
    HEAD_DIM_V = value.shape[-1]
    assert HEAD_DIM_Q == HEAD_DIM_K and HEAD_DIM_K == HEAD_DIM_V
    o = torch.empty_like(query, dtype=value.dtype)
    lse = torch.empty(query.shape[:3], device=query.device, dtype=torch.float32)
    stage = 3 if causal else 1
    sm_scale = 1.0 / (HEAD_DIM_K**0.5)
    BLOCK_M, BLOCK_N = 16, 16
    grid = (triton.cdiv(query.shape[2], BLOCK_M), query.shape[0] * query.shape[1], 1)
    _attn_fwd[grid](
        query, key, value, sm_scale, o, lse,
        query.stride(0), query.stride(1), query.stride(2), query.stride(3),
        key.stride(0), key.stride(1), key.stride(2), key.stride(3),
        value.stride(0), value.stride(1), value.stride(2), value.stride(3),
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
        query.shape[0], query.shape[1], query.shape[2], key.shape[2],
        HEAD_DIM=HEAD_DIM_K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, STAGE=stage,
    )
    return o, lse
