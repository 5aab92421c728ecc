# quizprep: exercise=paged-decode
# expect: fail diagnosis=paged-tail-unmasked
# FlashInfer's test reference for BatchDecodeWithPagedKVCacheWrapper (tests/test_batch_decode_kernels.py, NHD
# layout): a CSR description of the pages (kv_indptr, kv_indices, kv_last_page_len with 1 ≤ last ≤ page_size),
# each sequence's keys as torch.cat of its full pages reshaped to (-1, num_kv_heads, head_dim) and its last page
# sliced to kv_last_page_len, then single-sequence decode attention. Adapter: block_table and seq_lens turned into
# that CSR form, and single_decode_with_kv_cache (a CUDA kernel) replaced by a float32 softmax with GQA. The
# slip (ours, not FlashInfer's): every page taken whole, kv_last_page_len never applied.
from __future__ import annotations

import torch


def to_csr(block_table, seq_lens, page_size):
    num_pages = (seq_lens + page_size - 1) // page_size
    kv_indptr = torch.cat([torch.zeros(1, dtype=torch.int64, device=seq_lens.device), num_pages.cumsum(0)])
    kv_indices = torch.cat([block_table[i, : int(num_pages[i])] for i in range(len(seq_lens))])
    kv_last_page_len = (seq_lens - 1) % page_size + 1
    return kv_indptr, kv_indices.long(), kv_last_page_len


def single_decode_with_kv_cache(q, k, v):
    group = q.shape[0] // k.shape[1]
    k = k.float().repeat_interleave(group, dim=1)
    v = v.float().repeat_interleave(group, dim=1)
    logits = torch.einsum("hd,nhd->hn", q.float(), k) / q.shape[-1] ** 0.5
    return torch.einsum("hn,nhd->hd", torch.softmax(logits, dim=-1), v).to(q.dtype)


def paged_decode(q, k_pool, v_pool, block_table, seq_lens):
    page_size, num_kv_heads, head_dim = k_pool.shape[1:]
    kv_indptr, kv_indices, _ = to_csr(block_table.long(), seq_lens.long(), page_size)
    outputs = []
    for i in range(q.shape[0]):
        pages = kv_indices[int(kv_indptr[i]): int(kv_indptr[i + 1])]
        ki = k_pool[pages].reshape(-1, num_kv_heads, head_dim)
        vi = v_pool[pages].reshape(-1, num_kv_heads, head_dim)
        outputs.append(single_decode_with_kv_cache(q[i], ki, vi))
    return torch.stack(outputs)
