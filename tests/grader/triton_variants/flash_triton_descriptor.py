# quizprep: exercise=flash-triton
"""Correct variant: tiles addressed by tensor descriptors (Triton 3.9 removed tl.make_block_ptr in their
favour), which need a unit feature stride: the launcher makes strided inputs contiguous. 32-key tiles."""
import math

import torch
import triton
import triton.language as tl

BLOCK_M, BLOCK_N = 16, 32


@triton.jit
def _forward(Q, K, V, Out, Lse,
             sqb, sqh, sqn, sqd, skb, skh, skn, skd, svb, svh, svn, svd, sob, soh, son, sod,
             H, N, scale, CAUSAL: tl.constexpr, D: tl.constexpr, PRECISION: tl.constexpr,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b, h = bh // H, bh % H
    q_desc = tl.make_tensor_descriptor(Q + b * sqb + h * sqh, [N, D], [sqn, 1], [BLOCK_M, D])
    k_desc = tl.make_tensor_descriptor(K + b * skb + h * skh, [N, D], [skn, 1], [BLOCK_N, D])
    v_desc = tl.make_tensor_descriptor(V + b * svb + h * svh, [N, D], [svn, 1], [BLOCK_N, D])
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    q = q_desc.load([start_m * BLOCK_M, 0])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    end = tl.minimum((start_m + 1) * BLOCK_M, N) if CAUSAL else N
    for start_n in range(0, end, BLOCK_N):
        cols = start_n + tl.arange(0, BLOCK_N)
        k = k_desc.load([start_n, 0])
        visible = cols[None, :] < N
        if CAUSAL:
            visible = visible & (cols[None, :] <= rows[:, None])
        s = tl.where(visible, tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = v_desc.load([start_n, 0])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m_i = m_new
    o_desc = tl.make_tensor_descriptor(Out + b * sob + h * soh, [N, D], [son, 1], [BLOCK_M, D])
    o_desc.store([start_m * BLOCK_M, 0], (acc / l_i[:, None]).to(Out.dtype.element_ty))
    tl.store(Lse + bh * N + rows, m_i + tl.log(l_i), mask=rows < N)


def flash_attention(q, k, v, causal=False):
    B, H, N, D = q.shape
    q, k, v = (t if t.stride(-1) == 1 else t.contiguous() for t in (q, k, v))
    out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    lse = torch.empty((B, H, N), device=q.device, dtype=torch.float32)
    grid = (triton.cdiv(N, BLOCK_M), B * H)
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=q.device))
    _forward[grid](q, k, v, out, lse, *q.stride(), *k.stride(), *v.stride(), *out.stride(),
                   H, N, 1.0 / math.sqrt(D), CAUSAL=causal, D=D, PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
                   BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out, lse
