# quizprep: exercise=online-softmax
# source: a one-line slip on jax-ml/jax jax/experimental/pallas/ops/gpu/decode_attention.py @ cec06d116c05f0d52adfceee3d3b730fdbcb0ce5 (attn_forward_kernel: m_i starts at jnp.finfo(jnp.float32).min and l_i at 0 in float32; the loop body takes m_curr = qk.max(-1), m_next = maximum(m_prev, m_curr), correction = exp(m_prev - m_next), l_next = correction * l_prev + exp(qk - m_next).sum(-1); decode_attn_unbatched's "final round of flash" merges the k_splits partial states with m_next = m.max(axis=0), correction = exp(m - m_next[None]), l_next = (l * correction).sum(axis=0), and normalises with o /= (l_next + eps), eps = finfo(l_next.dtype).eps)
# style: Pallas's split-K decode attention (Flash-Decoding) in JAX: the state starts from the most negative finite float instead of -inf, so no guard is needed; partial states of all splits stacked on a leading axis and merged in one reduction; eps added to the normaliser
# adapter: jnp.* rewritten as torch.* op for op (x.max(axis) → amax(dim), jnp.stack → torch.stack); the o (values) half of the kernel's carry left out: only the (m, l) recurrence is kept; online_update is the loop body applied to one chunk; merge_states is the final round over the two states stacked as two splits; online_softmax runs the body over the chunks as one split and the final round over that single split, then exp(x - m) / (l + eps); the contract's empty state (-inf, 0) mapped onto the kernel's start value (max with finfo.min) before the body and the final round; the float32 state is at least float32 (float64 inputs keep float64 and its finfo)
# expect: fail diagnosis=merge-no-rescale
# bug: slip of ours: the final round sums the partial l's as they are, l_next = l.sum(dim=0), though the line above it (kept for o in the kernel) rescales each split by correction = exp(m - m_next): two states with different maxima are added on different scales
from __future__ import annotations

import torch


def _start(row_max):
    # the kernel never sees -inf: m_i starts at finfo(float32).min
    work = torch.promote_types(row_max.dtype, torch.float32)
    return torch.maximum(row_max.to(work), torch.tensor(torch.finfo(work).min, dtype=work, device=row_max.device))


def _body(m_prev, l_prev, qk):
    # attn_forward_kernel's loop body, (m, l) half
    m_curr = qk.amax(dim=-1)
    m_next = torch.maximum(m_prev, m_curr)
    correction = torch.exp(m_prev - m_next)
    l_prev_corr = correction * l_prev
    s_curr = torch.exp(
        qk - m_next[..., None]
    )  # Use m_next instead of m_curr to avoid a correction on l_curr
    l_curr = s_curr.sum(dim=-1)
    l_next = l_prev_corr + l_curr
    return m_next, l_next


def _final_round(m, l):
    # final round of flash
    m_next = m.amax(dim=0)
    correction = torch.exp(m - m_next[None])
    l_next = l.sum(dim=0)
    return m_next, l_next


def online_update(row_max, row_sum, chunk):
    m_prev = _start(row_max)
    l_prev = row_sum.to(m_prev.dtype)
    return _body(m_prev, l_prev, chunk.to(m_prev.dtype))


def merge_states(max_a, sum_a, max_b, sum_b):
    m = torch.stack([_start(max_a), _start(max_b)])
    l = torch.stack([sum_a, sum_b]).to(m.dtype)
    return _final_round(m, l)


def online_softmax(x, chunk_size):
    work = torch.promote_types(x.dtype, torch.float32)
    m_i = torch.zeros(x.shape[:-1], dtype=work, device=x.device) + torch.finfo(work).min
    l_i = torch.zeros(x.shape[:-1], dtype=work, device=x.device)
    for start_k in range(0, x.shape[-1], chunk_size):
        m_i, l_i = _body(m_i, l_i, x[..., start_k:start_k + chunk_size].to(work))
    m_next, l_next = _final_round(m_i[None], l_i[None])
    eps = torch.finfo(l_next.dtype).eps
    o = torch.exp(x.to(work) - m_next[..., None]) / (l_next[..., None] + eps)
    return o.to(x.dtype)
