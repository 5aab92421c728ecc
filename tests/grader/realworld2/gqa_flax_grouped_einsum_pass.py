# quizprep: exercise=gqa
# style: JAX-like grouped einsum without materialising repeated K/V: (B, T, G, R, d) queries against (B, S, G, d) keys
# expect: pass
from __future__ import annotations

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads, dropout_rate=0.0):
        super().__init__()
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.head_dim = d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.head_dim)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.head_dim)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.head_dim)
        self.W_o = nn.Linear(n_heads * self.head_dim, d_model)
        self.dropout = nn.Dropout(dropout_rate)

    def forward(self, x, mask=None):
        b, t, _ = x.shape
        g, d = self.n_kv_heads, self.head_dim
        r = self.n_heads // g
        # query head h = group * r + j: the group index is the slower one, as in the contract
        q = self.W_q(x).view(b, t, g, r, d) * d ** -0.5
        k = self.W_k(x).view(b, t, g, d)
        v = self.W_v(x).view(b, t, g, d)
        logits = torch.einsum("btgrd,bsgd->bgrts", q, k).reshape(b, g * r, t, t)
        if mask is not None:
            logits = logits.masked_fill(mask.logical_not(), float("-inf"))
        probs = self.dropout(torch.softmax(logits, dim=-1)).view(b, g, r, t, t)
        out = torch.einsum("bgrts,bsgd->btgrd", probs, v).reshape(b, t, g * r * d)
        return self.W_o(out)
