# quizprep: exercise=flash
# source: a one-line slip on zhuzilin/ring-flash-attention ring_flash_attn/utils.py and ring_flash_attn/ring_flash_attn.py @ a9204062ed1cfb24794a5cf7ed65e38e679ba136 (ring_flash_attn_forward: for each ring step the local q meets one kv chunk through flash_attn's _flash_attn_forward, chunks after the diagonal skipped under causal (`if not causal or step <= comm.rank`), the diagonal one run with causal=True; update_out_and_lse starts from the first (block_out, block_lse) and merges the rest with out = out - F.sigmoid(block_lse - lse) * (out - block_out), lse = lse - F.logsigmoid(lse - block_lse), all in float32, then out.to(q.dtype))
# style: ring attention on one device: a normalised partial output and its log-sum-exp per block, merged by sigmoid weights instead of a running (max, sum, accumulator); the first block initialises the state (`if out is None`)
# adapter: the ring's ranks become query tiles of block_size and its steps key tiles of block_size, visited in ring order (the tile holding the tile's first query position, then backwards, wrapping); _flash_attn_forward (a CUDA kernel) replaced by a stand-in that returns what it returns: the block's softmax(q kᵀ · scale) v in q's dtype and its row lse, with rows that see no key of the block given out 0 and lse -inf, written with exp/amax/sum; the causal mask at absolute positions (query i at i + m - n) and key tiles past a query tile's last position skipped (a tile that sees no key at all, n > m under causal, gets zeros); block_lse kept in (..., n), out's own layout, so its transpose(-2, -1) is dropped; @torch.jit.script left off; "float32" means at least float32 (float64 inputs stay float64)
# expect: fail diagnosis=flash-merge-weights-swapped
# bug: slip of ours: the output merge weighs with F.sigmoid(lse - block_lse) instead of F.sigmoid(block_lse - lse) (the two sigmoid forms of PR #34's derivation crossed), so the running output keeps the new block's weight and the new block gets the old one; the lse update is right
from __future__ import annotations

import math
from typing import Optional, Tuple

import torch
import torch.nn.functional as F


def _update_out_and_lse(
    out: torch.Tensor,
    lse: torch.Tensor,
    block_out: torch.Tensor,
    block_lse: torch.Tensor,
) -> Tuple[torch.Tensor, torch.Tensor]:

    block_out = block_out.to(out.dtype)
    block_lse = block_lse.unsqueeze(dim=-1)

    # new_lse = lse + torch.log(1 + torch.exp(block_lse - lse))
    # torch.exp(lse - new_lse) * out + torch.exp(block_lse - new_lse) * block_out
    # For additional context and discussion, please refer to:
    # https://github.com/zhuzilin/ring-flash-attention/pull/34#issuecomment-2076126795
    out = out - F.sigmoid(lse - block_lse) * (out - block_out)
    lse = lse - F.logsigmoid(lse - block_lse)

    return out, lse


def update_out_and_lse(
    out: Optional[torch.Tensor],
    lse: Optional[torch.Tensor],
    block_out: torch.Tensor,
    block_lse: torch.Tensor,
    acc_dtype: torch.dtype,
) -> Tuple[torch.Tensor, torch.Tensor]:
    if out is None:
        out = block_out.to(acc_dtype)
        lse = block_lse.to(acc_dtype).unsqueeze(dim=-1)
    else:
        out, lse = _update_out_and_lse(out, lse, block_out, block_lse.to(acc_dtype))
    return out, lse


def _flash_attn_forward(q, k, v, softmax_scale, q_pos, k_pos, causal, acc_dtype):
    # stand-in for flash_attn's kernel: (block_out in q's dtype, block_lse)
    s = torch.matmul(q.to(acc_dtype), k.to(acc_dtype).transpose(-2, -1)) * softmax_scale
    if causal:
        s = s.masked_fill(k_pos[None, :] > q_pos[:, None], float("-inf"))
    row_max = s.amax(dim=-1, keepdim=True)
    empty = row_max == float("-inf")
    p = torch.exp(s - torch.where(empty, torch.zeros_like(row_max), row_max))
    row_sum = p.sum(dim=-1, keepdim=True)
    block_out = torch.matmul(p, v.to(acc_dtype)) / torch.where(empty, torch.ones_like(row_sum), row_sum)
    block_lse = (row_max + torch.log(row_sum)).squeeze(-1)
    return block_out.to(q.dtype), block_lse


def ring_flash_attn_forward(q, k, v, softmax_scale, causal, block_size):
    n, m = q.shape[-2], k.shape[-2]
    acc_dtype = torch.promote_types(q.dtype, torch.float32)
    world_size = math.ceil(m / block_size)
    outs = []
    for q_start in range(0, n, block_size):
        q_tile = q[..., q_start:q_start + block_size, :]
        q_pos = torch.arange(q_start, q_start + q_tile.shape[-2], device=q.device) + (m - n)
        rank = min(max(int(q_pos[0]), 0) // block_size, world_size - 1)
        out = None
        lse = None
        for step in range(world_size):
            kv_rank = (rank - step) % world_size
            k_start = kv_rank * block_size
            if not causal or k_start <= int(q_pos[-1]):
                k_tile = k[..., k_start:k_start + block_size, :]
                v_tile = v[..., k_start:k_start + block_size, :]
                k_pos = torch.arange(k_start, k_start + k_tile.shape[-2], device=q.device)
                block_out, block_lse = _flash_attn_forward(
                    q_tile, k_tile, v_tile, softmax_scale, q_pos, k_pos, causal, acc_dtype
                )
                out, lse = update_out_and_lse(out, lse, block_out, block_lse, acc_dtype)
        if out is None:  # n > m under causal: no key for any query of the tile
            out = torch.zeros(q_tile.shape[:-1] + v.shape[-1:], dtype=acc_dtype, device=q.device)
        outs.append(out.to(q.dtype))
    return torch.cat(outs, dim=-2)


def flash_attention(q, k, v, *, causal=False, block_size=64):
    return ring_flash_attn_forward(q, k, v, q.shape[-1] ** -0.5, causal, block_size)
