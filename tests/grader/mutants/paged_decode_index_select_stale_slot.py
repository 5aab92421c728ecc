# quizprep: exercise=paged-decode
# expect: check=ragged diagnosis=paged-length-off-by-one
# Whole block-table rows gathered with index_select, as FlashInfer's and vLLM's gather-then-mask paths do,
# then a length mask that keeps one stale slot (<= where < belongs).
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
    valid = torch.arange(slots, device=q.device)[None, :] <= seq_lens[:, None]  # BUG
    scores = scores.masked_fill(~valid[:, None, :], float("-inf"))
    return torch.einsum("bhl,blhd->bhd", scores.softmax(dim=-1), v).to(q.dtype)
