# quizprep: exercise=mha
# style: unflatten/transpose helper to split heads, view_as to merge back
# expect: fail diagnosis=merge-no-transpose
# bug: the (B, H, n, d_k) context is merged with .contiguous().view_as(query), i.e. reshaped to (B, n, d_model) without moving the head axis back first
from __future__ import annotations

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.d_k = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split_heads(self, x):
        return x.unflatten(-1, (self.n_heads, self.d_k)).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q = self.split_heads(self.W_q(query))
        k = self.split_heads(self.W_k(key))
        v = self.split_heads(self.W_v(value))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        context = torch.matmul(attn, v).contiguous().view_as(query)
        return self.W_o(context), attn
