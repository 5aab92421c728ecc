# quizprep: exercise=gqa
# style: tutorial-style GQA with repeat_interleave and a causal mask passed in, head split by a single view
# expect: fail diagnosis=split-no-transpose
# bug: projections are viewed straight as (B, H, T, d_head) instead of view(B, T, H, d_head).transpose(1, 2); the merge transposes back as usual
from __future__ import annotations

import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.d_head = d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.d_head)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d_head)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d_head)
        self.W_o = nn.Linear(n_heads * self.d_head, d_model)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_q(x).view(B, self.n_heads, T, self.d_head)
        k = self.W_k(x).view(B, self.n_kv_heads, T, self.d_head)
        v = self.W_v(x).view(B, self.n_kv_heads, T, self.d_head)
        group = self.n_heads // self.n_kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            att = att.masked_fill(~mask, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, -1)
        return self.W_o(y)
