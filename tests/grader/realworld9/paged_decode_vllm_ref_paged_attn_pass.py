# quizprep: exercise=paged-decode
# source: vllm-project/vllm tests/kernels/test_flash_attn.py @ 01cedc060f448e283bbd9b35f5de0d30559586b3 (ref_paged_attn, the reference test_flash_attn_with_paged_kv checks flash_attn_with_kvcache against, called with query_lens=[1] * num_seqs)
# style: the pages of each sequence gathered whole with key_cache[block_indices].view(-1, H_kv, d), then sliced [:kv_len]; q scaled first; einsum 'qhd,khd->hqk'; a float32 softmax cast back to the values' dtype
# adapter: query_lens all 1 and kv_lens = seq_lens as the decode test calls it; scale = d ** -0.5 as the test sets it; the query handed over as a copy
# expect: pass
from __future__ import annotations

from typing import List, Optional

import torch


def ref_paged_attn(
    query: torch.Tensor,
    key_cache: torch.Tensor,
    value_cache: torch.Tensor,
    query_lens: List[int],
    kv_lens: List[int],
    block_tables: torch.Tensor,
    scale: float,
    sliding_window: Optional[int] = None,
    soft_cap: Optional[float] = None,
) -> torch.Tensor:
    num_seqs = len(query_lens)
    block_tables = block_tables.cpu().numpy()
    _, block_size, num_kv_heads, head_size = key_cache.shape

    outputs: List[torch.Tensor] = []
    start_idx = 0
    for i in range(num_seqs):
        query_len = query_lens[i]
        kv_len = kv_lens[i]
        q = query[start_idx:start_idx + query_len]
        q *= scale

        num_kv_blocks = (kv_len + block_size - 1) // block_size
        block_indices = block_tables[i, :num_kv_blocks]

        k = key_cache[block_indices].view(-1, num_kv_heads, head_size)
        k = k[:kv_len]
        v = value_cache[block_indices].view(-1, num_kv_heads, head_size)
        v = v[:kv_len]

        if q.shape[1] != k.shape[1]:
            k = torch.repeat_interleave(k, q.shape[1] // k.shape[1], dim=1)
            v = torch.repeat_interleave(v, q.shape[1] // v.shape[1], dim=1)
        attn = torch.einsum("qhd,khd->hqk", q, k).float()
        empty_mask = torch.ones(query_len, kv_len)
        mask = torch.triu(empty_mask, diagonal=kv_len - query_len + 1).bool()
        if sliding_window is not None:
            sliding_window_mask = torch.triu(empty_mask,
                                             diagonal=kv_len -
                                             (query_len + sliding_window) +
                                             1).bool().logical_not()
            mask |= sliding_window_mask
        if soft_cap is not None:
            attn = soft_cap * torch.tanh(attn / soft_cap)
        attn.masked_fill_(mask, float("-inf"))
        attn = torch.softmax(attn, dim=-1).to(v.dtype)
        out = torch.einsum("hqk,khd->qhd", attn, v)

        outputs.append(out)
        start_idx += query_len

    return torch.cat(outputs, dim=0)


def paged_decode(q, k_pool, v_pool, block_table, seq_lens):
    return ref_paged_attn(query=q.clone(), key_cache=k_pool, value_cache=v_pool, query_lens=[1] * q.shape[0],
                          kv_lens=seq_lens.tolist(), block_tables=block_table, scale=q.shape[-1] ** -0.5)
