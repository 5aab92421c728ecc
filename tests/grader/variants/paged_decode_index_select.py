# quizprep: exercise=paged-decode
# expect: pass
# Correct: every sequence's whole block-table row gathered at once with index_select (the gather-then-mask
# shape of FlashInfer's and vLLM's reference paths), then a length mask on the scores.
from __future__ import annotations

import torch


def paged_decode(q: torch.Tensor, k_pool: torch.Tensor, v_pool: torch.Tensor, block_table: torch.Tensor,
                 seq_lens: torch.Tensor) -> torch.Tensor:
    page_size, kv_heads, d = k_pool.shape[1:]
    batch, heads = q.shape[:2]
    slots = block_table.shape[1] * page_size
    pages = block_table.flatten().long().clamp(0, k_pool.shape[0] - 1)
    k = k_pool.index_select(0, pages).reshape(batch, slots, kv_heads, d).float()
    v = v_pool.index_select(0, pages).reshape(batch, slots, kv_heads, d).float()
    k, v = k.repeat_interleave(heads // kv_heads, dim=2), v.repeat_interleave(heads // kv_heads, dim=2)
    scores = torch.einsum("bhd,blhd->bhl", q.float(), k) * d ** -0.5
    valid = torch.arange(slots, device=q.device)[None, :] < seq_lens[:, None]
    scores = scores.masked_fill(~valid[:, None, :], float("-inf"))
    return torch.einsum("bhl,blhd->bhd", scores.softmax(dim=-1), v).to(q.dtype)
