# quizprep: exercise=mha
# style: textbook module, heads made with a single view, masked_fill(~mask, -inf)
# expect: fail diagnosis=split-no-transpose
# bug: heads are split with .view(B, H, T, d) straight from (B, T, d_model), no transpose (merged back with the inverse view)
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
        Q = self.W_q(query).view(B, self.n_heads, n, self.d_k)
        K = self.W_k(key).view(B, self.n_heads, m, self.d_k)
        V = self.W_v(value).view(B, self.n_heads, m, self.d_k)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ V).view(B, n, self.d_model)
        return self.W_o(out), weights
