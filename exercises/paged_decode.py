"""Exercise: one decode step of attention over a paged KV cache (vLLM's PagedAttention).

    paged_decode(q, k_pool, v_pool, block_table, seq_lens) -> out

A serving engine keeps every sequence's keys and values in fixed-size pages of one shared pool
instead of one contiguous tensor per sequence, so memory is handed out page by page:
- k_pool, v_pool (num_pages, page_size, G, d): the pool; G KV heads;
- block_table (B, max_pages) int: row b lists the pool pages of sequence b in order: token t of
  sequence b lives at k_pool[block_table[b, t // page_size], t % page_size]. Entries past a
  sequence's last page are padding and point at pages that belong to someone else;
- seq_lens (B,) int: how many tokens sequence b has in the cache, the new token included (its
  K and V were written to the pool before this call, as vLLM's reshape_and_cache does);
- q (B, H, d): one new query per sequence; query head h reads KV head h // (H / G).

Return out (B, H, d): for each sequence, softmax(q kᵀ / √d) v over its seq_lens[b] tokens and
nothing else. The slots after the last token of a sequence's last page hold stale keys of a
sequence that finished earlier; pages may sit anywhere in the pool, in any order, and two
sequences may share a page (a common prompt prefix).

Rules: F.scaled_dot_product_attention is off limits; gather into contiguous tensors if you like.

Why this matters in an interview:
- contiguous per-sequence caches must reserve the maximum length up front; paging wastes at most
  one partly filled page per sequence, which is how vLLM fits several times more sequences;
- the page table is the same indirection as virtual memory: logical block t // page_size,
  offset t % page_size; sharing a page (prefix caching, beam search) is copy-on-write;
- the decode step reads every cached byte once for one query row per head: memory-bound, so
  kernels split long sequences across thread blocks and merge the partial softmaxes.

Check your work:  quizprep grade paged_decode.py
"""
from __future__ import annotations

import torch


def paged_decode(q: torch.Tensor, k_pool: torch.Tensor, v_pool: torch.Tensor, block_table: torch.Tensor,
                 seq_lens: torch.Tensor) -> torch.Tensor:
    raise NotImplementedError
