# quizprep: exercise=gqa
# expect: check=grouped diagnosis=gqa-repeat
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
        q = self.W_q(x).view(b, t, self.h, self.d).transpose(1, 2)
        k = self.W_k(x).view(b, t, self.g, self.d).transpose(1, 2)
        v = self.W_v(x).view(b, t, self.g, self.d).transpose(1, 2)
        k = k.repeat(1, self.h // self.g, 1, 1)  # BUG
        v = v.repeat(1, self.h // self.g, 1, 1)  # BUG
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.W_o((weights @ v).transpose(1, 2).reshape(b, t, -1))
