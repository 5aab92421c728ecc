# quizprep: exercise=mha
# expect: check=cross-attention diagnosis=kv-ignored unread=key
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h, self.d_k, self.d_model = n_heads, d_model // n_heads, d_model
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def split(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.h, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        b, n, _ = query.shape
        q = self.split(self.W_q(query))
        k = self.split(self.W_k(query))
        v = self.split(self.W_v(query))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        heads = (weights @ v).transpose(1, 2).reshape(b, n, self.d_model)
        return self.W_o(heads), weights
