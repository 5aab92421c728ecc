# quizprep: exercise=mha
# style: nn.MultiheadAttention's default: weights averaged over heads
# expect: fail diagnosis=weights-head-averaged
# bug: returns weights.mean(dim=1), shape (B, n, m), as average_attn_weights=True does
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def _split(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.n_heads, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = self._split(self.W_q(query)), self._split(self.W_k(key)), self._split(self.W_v(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(query.shape[0], query.shape[1], -1)
        return self.W_o(out), weights.mean(dim=1)
