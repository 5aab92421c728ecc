# quizprep: exercise=paged-decode
# expect: check=ragged diagnosis=paged-length-off-by-one
# seq_lens - 1 tokens: the new token's own key is left out.
from __future__ import annotations

import math

import torch


def paged_decode(q: torch.Tensor, k_pool: torch.Tensor, v_pool: torch.Tensor, block_table: torch.Tensor,
                 seq_lens: torch.Tensor) -> torch.Tensor:
    page_size, kv_heads = k_pool.shape[1], k_pool.shape[2]
    group = q.shape[1] // kv_heads
    work = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype
    out = torch.empty_like(q)
    for b in range(q.shape[0]):
        positions = torch.arange(int(seq_lens[b]) - 1, device=q.device)  # BUG
        pages = block_table[b].long()[positions // page_size]
        k = k_pool[pages, positions % page_size].to(work)  # (L, G, d)
        v = v_pool[pages, positions % page_size].to(work)
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)  # (L, H, d)
        scores = torch.einsum("hd,lhd->hl", q[b].to(work), k) / math.sqrt(q.shape[-1])
        weights = torch.softmax(scores, dim=-1)
        out[b] = torch.einsum("hl,lhd->hd", weights, v).to(q.dtype)
    return out
