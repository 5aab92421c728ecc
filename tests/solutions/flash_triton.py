# quizprep: exercise=flash-triton
"""Example solution: one program per (query block, batch·head), online softmax over key blocks."""
import math

import torch
import triton
import triton.language as tl

BLOCK_M, BLOCK_N = 16, 16  # interpreted (no CUDA): small tiles keep each Python-run program cheap
# float32 inputs are graded at float32 precision: a GPU's tl.dot would round them to TF32 by default
GPU_TILES = {64: (128, 64, 4, 3), 128: (128, 64, 8, 3)}  # d -> BLOCK_M, BLOCK_N, num_warps, num_stages


@triton.jit
def _forward(Q, K, V, Out, Lse,
             sqb, sqh, sqn, sqd, skb, skh, skn, skd, svb, svh, svn, svd, sob, soh, son, sod,
             H, N, scale, CAUSAL: tl.constexpr, D: tl.constexpr, PRECISION: tl.constexpr,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b, h = bh // H, bh % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q_ptrs = Q + b * sqb + h * sqh + offs_m[:, None] * sqn + offs_d[None, :] * sqd
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N, other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    end = tl.minimum((start_m + 1) * BLOCK_M, N) if CAUSAL else N
    for start_n in range(0, end, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(K + b * skb + h * skh + cols[None, :] * skn + offs_d[:, None] * skd,
                    mask=cols[None, :] < N, other=0.0)
        s = tl.dot(q, k, input_precision=PRECISION) * scale
        s = tl.where(cols[None, :] < N, s, float("-inf"))
        if CAUSAL:
            s = tl.where(cols[None, :] <= offs_m[:, None], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + b * svb + h * svh + cols[:, None] * svn + offs_d[None, :] * svd,
                    mask=cols[:, None] < N, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(Out + b * sob + h * soh + offs_m[:, None] * son + offs_d[None, :] * sod,
             acc.to(Out.dtype.element_ty), mask=offs_m[:, None] < N)
    tl.store(Lse + bh * N + offs_m, m_i + tl.log(l_i), mask=offs_m < N)


def flash_attention(q, k, v, causal=False):
    B, H, N, D = q.shape
    out = torch.empty_like(q)
    lse = torch.empty((B, H, N), device=q.device, dtype=torch.float32)
    block_m, block_n, *launch = GPU_TILES[D] if q.is_cuda else (BLOCK_M, BLOCK_N)
    tuning = dict(zip(("num_warps", "num_stages"), launch))
    precision = "ieee" if q.dtype == torch.float32 else "tf32"
    grid = (triton.cdiv(N, block_m), B * H)
    _forward[grid](q, k, v, out, lse, *q.stride(), *k.stride(), *v.stride(), *out.stride(),
                   H, N, 1.0 / math.sqrt(D), CAUSAL=causal, D=D, PRECISION=precision, BLOCK_M=block_m,
                   BLOCK_N=block_n, **tuning)
    return out, lse
