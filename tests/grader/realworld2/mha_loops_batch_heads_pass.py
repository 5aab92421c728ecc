# quizprep: exercise=mha
# style: explicit nested Python loops over batch and heads, per-head feature slices, torch.cat of head outputs
# expect: pass
from __future__ import annotations

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_k = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        B, n, _ = query.shape
        m = key.shape[1]
        Q, K, V = self.W_q(query), self.W_k(key), self.W_v(value)
        if mask is None:
            mask = torch.ones(n, m, dtype=torch.bool, device=query.device)
        mask = mask.expand(B, self.n_heads, n, m)

        batch_out, batch_weights = [], []
        for b in range(B):
            head_out, head_weights = [], []
            for h in range(self.n_heads):
                cols = slice(h * self.d_k, (h + 1) * self.d_k)
                s = Q[b, :, cols] @ K[b, :, cols].T / math.sqrt(self.d_k)
                s = s.masked_fill(~mask[b, h], float("-inf"))
                p = torch.softmax(s, dim=-1)
                head_out.append(p @ V[b, :, cols])
                head_weights.append(p)
            batch_out.append(torch.cat(head_out, dim=-1))
            batch_weights.append(torch.stack(head_weights))
        out = self.W_o(torch.stack(batch_out))
        return out, torch.stack(batch_weights)
