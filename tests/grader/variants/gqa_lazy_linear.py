# quizprep: exercise=gqa
# Correct: nn.LazyLinear projections, which learn their input width from the first call.
import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.d_head = d_model // n_heads
        self.W_q = nn.LazyLinear(n_heads * self.d_head)
        self.W_k = nn.LazyLinear(n_kv_heads * self.d_head)
        self.W_v = nn.LazyLinear(n_kv_heads * self.d_head)
        self.W_o = nn.LazyLinear(d_model)

    def forward(self, x, mask=None):
        batch, length, _ = x.shape
        q = self.W_q(x).view(batch, length, self.n_heads, self.d_head).transpose(1, 2)
        k = self.W_k(x).view(batch, length, self.n_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_v(x).view(batch, length, self.n_kv_heads, self.d_head).transpose(1, 2)
        group = self.n_heads // self.n_kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        heads = torch.softmax(scores, dim=-1) @ v
        return self.W_o(heads.transpose(1, 2).reshape(batch, length, -1))
