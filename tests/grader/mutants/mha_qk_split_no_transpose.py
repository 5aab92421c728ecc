# quizprep: exercise=mha
# expect: check=self-attention diagnosis=split-no-transpose
# The queries and keys go through a helper that views (B, T, D) straight as (B, H, T, d); the values
# are split right, inline. Only the scores are wrong.
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h, self.d = n_heads, d_model // n_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def heads(self, x):
        return x.reshape(x.shape[0], self.h, x.shape[1], self.d)  # BUG: needs view(B, T, H, d).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k = self.heads(self.W_q(query)), self.heads(self.W_k(key))
        v = self.W_v(value).unflatten(-1, (self.h, self.d)).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d)
        if mask is not None:
            scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        weights = scores.softmax(dim=-1)
        out = torch.matmul(weights, v).transpose(1, 2).flatten(2)
        return self.W_o(out), weights
