# quizprep: exercise=mha
# style: dropout written as F.dropout(..., training=True), which .eval() cannot turn off
# expect: fail diagnosis=dropout-active
import math

import torch
import torch.nn.functional as F
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
        return x.view(b, t, self.n_heads, d // self.n_heads).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.split(self.W_q(query)), self.split(self.W_k(key)), self.split(self.W_v(value))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = F.dropout(torch.softmax(scores, dim=-1), p=0.2, training=True)
        b, _, t, _ = q.shape
        return self.W_o((weights @ v).transpose(1, 2).reshape(b, t, -1)), weights
