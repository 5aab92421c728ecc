# quizprep: exercise=online-softmax
# source: flagos-ai/FlagGems src/flag_gems/ops/softmax.py @ 9c1b2bee76f94dc18d09ee0d4bc0e1fb64acca5c (softmax_kernel_inner: with one tile per row, m = max, e = exp(inp - m), out = e / sum(e) in the output dtype; otherwise per-lane states m = full([TILE_N], -inf), z = zeros([TILE_N]) in float32, each tile folded lane by lane with m_new = maximum(m, inp); z = z * exp(m - m_new) + exp(inp - m_new); the last tile loaded with other=-inf; the lanes then reduced with m_reduced = max(m), z = sum(z * exp(m - m_reduced)); a second pass, last tile first, writes exp(inp - m) / z)
# style: a Triton softmax kernel's online normaliser kept per lane: TILE_N independent (max, sum) states, one logit each per tile, combined only at the end by a max-and-rescale reduction
# adapter: tl.* rewritten as torch.* op for op (tl.max/tl.sum over the lanes → amax/sum over the last axis); the program-per-row grid vectorised over the leading dims; TILE_N = chunk_size, the masked last tile padded with -inf as tl.load(..., other=-inf) does; online_update is the loop body with TILE_N = 1: the row state is the one lane and the chunk's columns are its successive loads; merge_states is the lanes' reduction over the two states as two lanes; the float32 lane state is at least float32 (float64 inputs stay float64)
# expect: fail diagnosis=online-nan-masked-chunk
# bug: as published: the lane update has no guard for a lane whose max is still -inf: when its first logits are -inf (masked), exp(m - m_new) = exp(-inf - (-inf)) is NaN and the lane's sum, then the whole row, becomes NaN; fixed in FlagGems 16f4e6919 (PR #330, "fix online softmax where there are inf's in the input": all_neg_inf = m_new == -inf; z = tl.where(all_neg_inf, z, ...))
from __future__ import annotations

import torch


def _prev_multiple_of(a, b):
    # the largest x<a that x%b ==0
    return -(-a // b) * b - b


def _loop_body(m, z, inp):
    m_new = torch.maximum(m, inp)
    z = z * torch.exp(m - m_new) + torch.exp(inp - m_new)
    m = m_new
    return m, z


def _reduce_lanes(m, z):
    m_reduced = torch.amax(m, dim=-1)
    z = torch.sum(z * torch.exp(m - m_reduced[..., None]), dim=-1)
    m = m_reduced
    return m, z


def softmax_kernel_inner(inp_rows, TILE_N):
    N = inp_rows.shape[-1]
    work = torch.promote_types(inp_rows.dtype, torch.float32)
    if TILE_N >= N:  # ONE_TILE_PER_CTA
        inp = inp_rows.to(inp_rows.dtype)
        m = torch.amax(inp, dim=-1, keepdim=True)
        e = torch.exp(inp - m)
        z = torch.sum(e, dim=-1, keepdim=True)
        return e / z
    m = torch.full(inp_rows.shape[:-1] + (TILE_N,), float("-inf"), dtype=work, device=inp_rows.device)
    z = torch.full(inp_rows.shape[:-1] + (TILE_N,), 0.0, dtype=work, device=inp_rows.device)

    previous_multiple = _prev_multiple_of(N, TILE_N)
    for start_n in range(0, previous_multiple, TILE_N):
        inp = inp_rows[..., start_n:start_n + TILE_N].to(work)
        m, z = _loop_body(m, z, inp)
    # specialize the last iteration
    for start_n in range(previous_multiple, N, TILE_N):
        inp = inp_rows[..., start_n:start_n + TILE_N].to(work)
        pad = TILE_N - inp.shape[-1]
        inp = torch.nn.functional.pad(inp, (0, pad), value=-float("inf"))
        m, z = _loop_body(m, z, inp)

    m, z = _reduce_lanes(m, z)

    out = torch.empty_like(inp_rows)
    # specialize the first iteration
    for start_n in range(0, TILE_N, TILE_N):
        sl = slice(previous_multiple - start_n, min(previous_multiple - start_n + TILE_N, N))
        o = torch.exp(inp_rows[..., sl].to(work) - m[..., None]) / z[..., None]
        out[..., sl] = o.to(out.dtype)
    for start_n in range(TILE_N, N, TILE_N):
        sl = slice(previous_multiple - start_n, previous_multiple - start_n + TILE_N)
        o = torch.exp(inp_rows[..., sl].to(work) - m[..., None]) / z[..., None]
        out[..., sl] = o.to(out.dtype)
    return out


def online_update(row_max, row_sum, chunk):
    work = torch.promote_types(chunk.dtype, torch.float32)
    m, z = row_max.to(work), row_sum.to(work)
    for j in range(chunk.shape[-1]):
        m, z = _loop_body(m, z, chunk[..., j].to(work))
    return m, z


def merge_states(max_a, sum_a, max_b, sum_b):
    m = torch.stack([max_a, max_b], dim=-1)
    z = torch.stack([sum_a, sum_b], dim=-1)
    return _reduce_lanes(m, z)


def online_softmax(x, chunk_size):
    return softmax_kernel_inner(x, chunk_size)
