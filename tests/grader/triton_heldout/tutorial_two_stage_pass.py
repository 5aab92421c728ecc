# quizprep: exercise=flash-triton
# source: triton-lang/triton, python/tutorials/06-fused-attention.py (_attn_fwd, _attn_fwd_inner: the
# off-band stage then the on-band stage, exp2 with log2(e) folded into qk_scale, M stored in log2 units),
# adapted: tl.make_block_ptr replaced by pointer arithmetic (the interpreter refuses block pointers),
# masks for a ragged n added; the launcher converts M to natural-log units.
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, K_base, V_base, stride_kn, stride_kk, stride_vn, stride_vk,
                    start_m, qk_scale, N_CTX,
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                    STAGE: tl.constexpr, offs_m, offs_n):
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
    else:
        lo, hi = 0, N_CTX
    offs_d = tl.arange(0, HEAD_DIM)
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        k = tl.load(K_base + offs_d[:, None] * stride_kk + cols[None, :] * stride_kn,
                    mask=cols[None, :] < N_CTX, other=0.0)
        qk = tl.dot(q, k, input_precision="ieee")
        qk = tl.where(cols[None, :] < N_CTX, qk, float("-inf"))
        if STAGE == 2:
            mask = offs_m[:, None] >= cols[None, :]
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V_base + cols[:, None] * stride_vn + offs_d[None, :] * stride_vk,
                    mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc, input_precision="ieee")
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, sm_scale, M, Out,
              stride_qz, stride_qh, stride_qm, stride_qk,
              stride_kz, stride_kh, stride_kn, stride_kk,
              stride_vz, stride_vh, stride_vk, stride_vn,
              stride_oz, stride_oh, stride_om, stride_on,
              Z, H, N_CTX,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + off_z * stride_qz + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk,
                mask=offs_m[:, None] < N_CTX, other=0.0)
    K_base = K + off_z * stride_kz + off_h * stride_kh
    V_base = V + off_z * stride_vz + off_h * stride_vh
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale
    qk_scale *= 1.44269504  # 1/log(2)
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_base, V_base, stride_kn, stride_kk, stride_vk,
                                        stride_vn, start_m, qk_scale, N_CTX,
                                        BLOCK_M, HEAD_DIM, BLOCK_N, 4 - STAGE, offs_m, offs_n)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K_base, V_base, stride_kn, stride_kk, stride_vk,
                                        stride_vn, start_m, qk_scale, N_CTX,
                                        BLOCK_M, HEAD_DIM, BLOCK_N, 2, offs_m, offs_n)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    m_ptrs = M + off_hz * N_CTX + offs_m
    tl.store(m_ptrs, m_i, mask=offs_m < N_CTX)
    tl.store(Out + off_z * stride_oz + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :] * stride_on,
             acc.to(Out.type.element_ty), mask=offs_m[:, None] < N_CTX)


def flash_attention(q, k, v, causal=False):
    HEAD_DIM = q.shape[-1]
    o = torch.empty_like(q)
    stage = 3 if causal else 1
    M = torch.empty((q.shape[0], q.shape[1], q.shape[2]), device=q.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N = 16, 16
    grid = (triton.cdiv(q.shape[2], BLOCK_M), q.shape[0] * q.shape[1])
    _attn_fwd[grid](
        q, k, v, 1.0 / math.sqrt(HEAD_DIM), M, o,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
        q.shape[0], q.shape[1], N_CTX=q.shape[2],
        HEAD_DIM=HEAD_DIM, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, STAGE=stage,
    )
    return o, M * math.log(2.0)  # the tutorial keeps M in log2 units for its exp2 backward
