# quizprep: exercise=gqa
# Correct: KV heads broadcast with expand + reshape instead of repeat_interleave.
import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.h, self.g, self.d = n_heads, n_kv_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.d)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d)
        self.W_o = nn.Linear(n_heads * self.d, d_model)

    def forward(self, x, mask=None):
        b, t, _ = x.shape
        group = self.h // self.g
        q = self.W_q(x).view(b, t, self.h, self.d).transpose(1, 2)
        k = self.W_k(x).view(b, t, self.g, 1, self.d).expand(b, t, self.g, group, self.d).reshape(b, t, self.h, self.d)
        v = self.W_v(x).view(b, t, self.g, 1, self.d).expand(b, t, self.g, group, self.d).reshape(b, t, self.h, self.d)
        k, v = k.transpose(1, 2), v.transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        out = torch.softmax(scores, dim=-1) @ v
        return self.W_o(out.transpose(1, 2).reshape(b, t, self.h * self.d))
