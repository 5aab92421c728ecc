# quizprep: exercise=paged-decode
# expect: check=ragged diagnosis=gqa-repeat
# A kernel-style loop over query heads that picks its KV head as h % G (the order Tensor.repeat
# tiles) instead of h // (H / G).
from __future__ import annotations

import math

import torch


def paged_decode(q: torch.Tensor, k_pool: torch.Tensor, v_pool: torch.Tensor, block_table: torch.Tensor,
                 seq_lens: torch.Tensor) -> torch.Tensor:
    batch, heads, d = q.shape
    page_size, kv_heads = k_pool.shape[1], k_pool.shape[2]
    out = torch.empty_like(q)
    for b in range(batch):
        length = int(seq_lens[b])
        pages = block_table[b, : -(-length // page_size)].long()
        k_seq = k_pool[pages].reshape(-1, kv_heads, d)[:length].double()
        v_seq = v_pool[pages].reshape(-1, kv_heads, d)[:length].double()
        for h in range(heads):
            g = h % kv_heads  # BUG
            scores = k_seq[:, g] @ q[b, h].double() / math.sqrt(d)
            weights = torch.softmax(scores, dim=0)
            out[b, h] = (weights @ v_seq[:, g]).to(q.dtype)
    return out
