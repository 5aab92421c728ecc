# quizprep: exercise=paged-decode
# expect: pass
# vLLM's test reference for its paged-attention kernel, tests/kernels/test_attention.py:
# ref_single_query_cached_kv_attention (a loop over sequences and tokens, block_number = block_table[j // block_size],
# block_offset = j % block_size, keys stacked, repeat_interleave for GQA) and ref_masked_attention (einsum
# "qhd,khd->hqk", a float32 softmax cast back to the values' dtype). Adapter: the pool is rearranged into vLLM's
# key cache (num_blocks, num_kv_heads, head_size // x, block_size, x) and value cache (num_blocks, num_kv_heads,
# head_size, block_size) layouts, and the scale is 1/√d. The block table and lengths are read on the host with
# .cpu().tolist(), as vLLM does (the device probe must not call that a placement bug).
from __future__ import annotations

import torch


def ref_masked_attention(query, key, value, scale, attn_mask=None):
    attn_weights = scale * torch.einsum("qhd,khd->hqk", query, key).float()
    if attn_mask is not None:
        attn_weights = attn_weights + attn_mask.float()
    attn_weights = torch.softmax(attn_weights, dim=-1).to(value.dtype)
    return torch.einsum("hqk,khd->qhd", attn_weights, value)


def ref_single_query_cached_kv_attention(output, query, num_queries_per_kv, key_cache, value_cache, block_tables,
                                         seq_lens, scale):
    num_query_heads = query.shape[1]
    num_kv_heads = value_cache.shape[1]
    head_size = value_cache.shape[2]
    block_size = value_cache.shape[3]
    num_seqs = query.shape[0]
    block_tables_lst = block_tables.cpu().tolist()
    seq_lens_lst = seq_lens.cpu().tolist()
    for i in range(num_seqs):
        q = query[i].unsqueeze(0)
        block_table = block_tables_lst[i]
        seq_len = int(seq_lens_lst[i])
        keys_lst, values_lst = [], []
        for j in range(seq_len):
            block_number = int(block_table[j // block_size])
            block_offset = j % block_size
            k = key_cache[block_number, :, :, block_offset, :]
            keys_lst.append(k.reshape(num_kv_heads, head_size))
            values_lst.append(value_cache[block_number, :, :, block_offset])
        keys = torch.stack(keys_lst, dim=0)
        values = torch.stack(values_lst, dim=0)
        if num_queries_per_kv > 1:
            keys = torch.repeat_interleave(keys, num_queries_per_kv, dim=1)
            values = torch.repeat_interleave(values, num_queries_per_kv, dim=1)
        out = ref_masked_attention(q, keys, values, scale)
        output[i].copy_(out.view(num_query_heads, head_size))


def paged_decode(q, k_pool, v_pool, block_table, seq_lens):
    num_pages, page_size, kv_heads, d = k_pool.shape
    x = 16 // k_pool.element_size() if d % (16 // k_pool.element_size()) == 0 else 1
    key_cache = k_pool.reshape(num_pages, page_size, kv_heads, d // x, x).permute(0, 2, 3, 1, 4)
    value_cache = v_pool.permute(0, 2, 3, 1)
    output = torch.empty_like(q)
    ref_single_query_cached_kv_attention(output, q, q.shape[1] // kv_heads, key_cache, value_cache, block_table,
                                         seq_lens, d ** -0.5)
    return output
