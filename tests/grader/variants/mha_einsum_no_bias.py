# quizprep: exercise=mha
# Correct: bias-free projections, reshape/permute and einsum.
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)

    def forward(self, query, key, value, mask=None):
        b, n, d_model = query.shape
        m, d = key.shape[1], d_model // self.h
        q = self.W_q(query).reshape(b, n, self.h, d).permute(0, 2, 1, 3)
        k = self.W_k(key).reshape(b, m, self.h, d).permute(0, 2, 1, 3)
        v = self.W_v(value).reshape(b, m, self.h, d).permute(0, 2, 1, 3)
        scores = torch.einsum("bhnd,bhmd->bhnm", q, k) / d**0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(-1)
        out = torch.einsum("bhnm,bhmd->bnhd", weights, v).reshape(b, n, d_model)
        return self.W_o(out), weights
