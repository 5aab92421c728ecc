# quizprep: exercise=gqa
# Correct: a loop over KV groups, each serving its block of consecutive query heads.
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
        per_group = self.h // self.g
        q = self.W_q(x).view(b, t, self.h, self.d)
        k = self.W_k(x).view(b, t, self.g, self.d)
        v = self.W_v(x).view(b, t, self.g, self.d)
        heads = []
        for h in range(self.h):
            kv = h // per_group
            scores = torch.einsum("btd,bsd->bts", q[:, :, h], k[:, :, kv]) / math.sqrt(self.d)
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            heads.append(torch.softmax(scores, dim=-1) @ v[:, :, kv])
        return self.W_o(torch.cat(heads, dim=-1))
