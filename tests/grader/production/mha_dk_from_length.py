# quizprep: exercise=mha
# style: d_k read from the length axis of the (B, H, T, d) query
# expect: fail diagnosis=scale-seq-len
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split(self, x):
        b, t, d = x.shape
        return x.reshape(b, t, self.n_heads, d // self.n_heads).permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.split(self.W_q(query)), self.split(self.W_k(key)), self.split(self.W_v(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-2))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        b, _, t, _ = q.shape
        return self.W_o((weights @ v).permute(0, 2, 1, 3).reshape(b, t, -1)), weights
