# quizprep: exercise=paged-decode
# expect: check=heads diagnosis=gqa-repeat
# KV heads tiled with repeat.
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
        positions = torch.arange(int(seq_lens[b]), device=q.device)
        pages = block_table[b].long()[positions // page_size]
        k = k_pool[pages, positions % page_size].to(work)  # (L, G, d)
        v = v_pool[pages, positions % page_size].to(work)
        k, v = k.repeat(1, group, 1), v.repeat(1, group, 1)  # (L, H, d)  # BUG
        scores = torch.einsum("hd,lhd->hl", q[b].to(work), k) / math.sqrt(q.shape[-1])
        weights = torch.softmax(scores, dim=-1)
        out[b] = torch.einsum("hl,lhd->hd", weights, v).to(q.dtype)
    return out
