# quizprep: exercise=mha
# style: fused QKV projection (weights concatenated in forward) unflattened to (3, H, d) and unbound; separate projections for cross-attention
# expect: pass
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _project(self, query, key, value):
        heads = (self.n_heads, self.d_head)
        if query is key and key is value:
            weight = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])
            bias = torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias])
            qkv = F.linear(query, weight, bias).unflatten(-1, (3, *heads))
            return qkv.unbind(dim=-3)
        return tuple(
            proj(x).unflatten(-1, heads) for proj, x in ((self.W_q, query), (self.W_k, key), (self.W_v, value))
        )

    def forward(self, query, key, value, mask=None):
        q, k, v = (t.transpose(1, 2) for t in self._project(query, key, value))  # (B, H, T, d)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)
        out = (weights @ v).transpose(1, 2).flatten(-2)
        return self.W_o(out), weights
