# quizprep: exercise=mha
# style: compact module, reshape straight to (B, H, T, d_k) as if the heads came first in memory
# expect: fail diagnosis=split-no-transpose
# bug: heads split with reshape(B, H, T, d_k) instead of view(B, T, H, d_k).transpose(1, 2)
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))

    def _split(self, x):
        B, T, _ = x.shape
        return x.reshape(B, self.n_heads, T, self.d_k)

    def forward(self, query, key, value, mask=None):
        B, n, D = query.shape
        q, k, v = self._split(self.W_q(query)), self._split(self.W_k(key)), self._split(self.W_v(value))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.d_k))
        if mask is not None:
            att = att.masked_fill(~mask, float("-inf"))
        att = att.softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, n, D)
        return self.W_o(y), att
