# quizprep: exercise=mha
# style: JAX/flax-like translated to torch: projections kept in (B, T, H, d) layout, einsum 'bqhd,bkhd->bhqk'
# expect: fail diagnosis=split-interleaved
# bug: the projections are viewed as (B, T, d_k, H) and swapped to (B, T, H, d_k), so head h reads features h, h+H, h+2H, ... instead of a contiguous block; the merge is the standard (B, T, H*d_k) reshape
from __future__ import annotations

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.num_heads = n_heads
        self.head_dim = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _heads(self, x):
        b, t, _ = x.shape
        return x.reshape(b, t, self.head_dim, self.num_heads).transpose(-1, -2)

    def forward(self, query, key, value, mask=None):
        q = self._heads(self.W_q(query))
        k = self._heads(self.W_k(key))
        v = self._heads(self.W_v(value))
        q = q / torch.tensor(self.head_dim, dtype=q.dtype).sqrt()
        logits = torch.einsum("bqhd,bkhd->bhqk", q, k)
        if mask is not None:
            logits = torch.where(mask, logits, torch.finfo(logits.dtype).min)
        weights = torch.softmax(logits, dim=-1)
        out = torch.einsum("bhqk,bkhd->bqhd", weights, v)
        b, t = out.shape[:2]
        return self.W_o(out.reshape(b, t, -1)), weights
