# quizprep: exercise=attention-backward
# source: a one-line slip on Dao-AILab/flash-attention flash_attn/flash_attn_triton.py @ 00583fb14af7b84c4dca7531dc23126870eb0d35 (_bwd_preprocess_do_o_dot's delta; _bwd_kernel_one_col_block: k and v of one column block kept, a loop over row blocks from begin_m, p = exp(qk * softmax_scale - lse_i), dv += pᵀ do, ds = p * (dp - Di) * softmax_scale, dk += dsᵀ q, dq += ds k; _bwd_kernel's loop over start_n)
# style: the Triton kernel's tiling ported to torch: key (column) blocks outside, query (row) blocks inside, the scale folded into ds, causal row blocks before the diagonal skipped through begin_m
# adapter: tl.load/tl.store written as tensor indexing; BLOCK_M = BLOCK_N = block_size (whole matrices when None); no bias; the causal comparison and begin_m shifted by seqlen_k - seqlen_q (bottom-right, as flash-attn 2.1 moved to; the Triton file aligns top-left); KV heads expanded for GQA and their gradients summed back
# expect: fail diagnosis=backward-p-unscaled
# bug: p recomputed as exp(qk - lse_i), the kernel's BIAS_TYPE != 'none' branch, whose qk was already multiplied by softmax_scale, taken without a bias: the scale never reaches p
from __future__ import annotations

import math

import torch


def _bwd_preprocess_do_o_dot(o, do):
    return (o.float() * do.float()).sum(-1)  # delta


def _bwd_kernel_one_col_block(start_n, q, k, v, do, dq, dk, dv, lse, delta, softmax_scale, causal, BLOCK_M, BLOCK_N):
    seqlen_q, seqlen_k = q.shape[-2], k.shape[-2]
    # We need to make sure begin_m is a multiple of BLOCK_M (not BLOCK_N)
    begin_m = 0 if not causal else max(0, ((start_n * BLOCK_N - (seqlen_k - seqlen_q)) // BLOCK_M) * BLOCK_M)
    offs_n = start_n * BLOCK_N + torch.arange(BLOCK_N, device=q.device)
    offs_n = offs_n[offs_n < seqlen_k]
    # k and v stay in SRAM throughout
    k_blk, v_blk = k[:, :, offs_n], v[:, :, offs_n]
    dv_blk = torch.zeros_like(v_blk)
    dk_blk = torch.zeros_like(k_blk)
    # loop over rows
    for start_m in range(begin_m, seqlen_q, BLOCK_M):
        offs_m_curr = torch.arange(start_m, min(start_m + BLOCK_M, seqlen_q), device=q.device)
        q_blk, do_blk = q[:, :, offs_m_curr], do[:, :, offs_m_curr]
        # recompute p = softmax(qk, dim=-1).T
        qk = q_blk @ k_blk.transpose(-1, -2)
        if causal:
            qk = torch.where(offs_m_curr[:, None] + (seqlen_k - seqlen_q) >= offs_n[None, :], qk, float("-inf"))
        lse_i = lse[:, :, offs_m_curr]
        p = torch.exp(qk - lse_i[..., None])
        # compute dv
        dv_blk += p.transpose(-1, -2) @ do_blk
        # compute dp = dot(v, do)
        dp = do_blk @ v_blk.transpose(-1, -2)
        # compute ds = p * (dp - delta[:, None])
        Di = delta[:, :, offs_m_curr]
        ds = p * (dp - Di[..., None]) * softmax_scale
        # compute dk = dot(ds.T, q)
        dk_blk += ds.transpose(-1, -2) @ q_blk
        # compute dq
        dq[:, :, offs_m_curr] += ds @ k_blk
    # write-back
    dk[:, :, offs_n], dv[:, :, offs_n] = dk_blk, dv_blk


def attention_backward(q, k, v, o, lse, d_o, causal=False, scale=None, block_size=None):
    softmax_scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    group = q.shape[1] // k.shape[1]
    qf, do = q.float(), d_o.float()
    kf = k.float().repeat_interleave(group, dim=1)
    vf = v.float().repeat_interleave(group, dim=1)
    delta = _bwd_preprocess_do_o_dot(o, d_o)
    BLOCK_M = BLOCK_N = block_size or max(q.shape[-2], k.shape[-2])
    dq, dk, dv = torch.zeros_like(qf), torch.zeros_like(kf), torch.zeros_like(vf)
    num_block_n = math.ceil(k.shape[-2] / BLOCK_N)
    for start_n in range(0, num_block_n):  # _bwd_kernel without SEQUENCE_PARALLEL
        _bwd_kernel_one_col_block(start_n, qf, kf, vf, do, dq, dk, dv, lse.float(), delta, softmax_scale, causal,
                                  BLOCK_M, BLOCK_N)
    dk = dk.unflatten(1, (k.shape[1], group)).sum(2)
    dv = dv.unflatten(1, (k.shape[1], group)).sum(2)
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
