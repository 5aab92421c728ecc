# quizprep: exercise=mha
# style: per-head scores scaled by the model width instead of the head width
# expect: fail diagnosis=scale-d-model
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.d_model, self.n_heads = d_model, n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def heads(self, x):
        return x.unflatten(-1, (self.n_heads, -1)).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.heads(self.W_q(query)), self.heads(self.W_k(key)), self.heads(self.W_v(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_model)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(-1)
        return self.W_o((weights @ v).transpose(1, 2).flatten(2)), weights
