# quizprep: exercise=mha
# Correct: a Python loop over heads, slicing each projection's features.
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.W_q(query), self.W_k(key), self.W_v(value)
        outs, all_weights = [], []
        for h in range(self.n_heads):
            part = slice(h * self.d_k, (h + 1) * self.d_k)
            scores = q[..., part] @ k[..., part].transpose(-2, -1) / math.sqrt(self.d_k)
            if mask is not None:
                head_mask = mask if mask.dim() < 4 else mask[:, 0]
                scores = scores.masked_fill(~head_mask, -1e9)
            weights = torch.softmax(scores, dim=-1)
            outs.append(weights @ v[..., part])
            all_weights.append(weights)
        return self.W_o(torch.cat(outs, dim=-1)), torch.stack(all_weights, dim=1)
