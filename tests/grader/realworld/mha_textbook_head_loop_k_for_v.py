# quizprep: exercise=mha
# style: textbook explicit loop over heads with column slices, masked_fill(~mask, -inf)
# expect: fail diagnosis=k-for-v
# bug: each head multiplies its weights by the projected keys (w @ k_h) instead of the projected values
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.d_k = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        Q, K, V = self.W_q(query), self.W_k(key), self.W_v(value)
        heads, weights = [], []
        for h in range(self.n_heads):
            cols = slice(h * self.d_k, (h + 1) * self.d_k)
            q_h, k_h = Q[..., cols], K[..., cols]
            scores = q_h @ k_h.transpose(-2, -1) / math.sqrt(self.d_k)
            if mask is not None:
                head_mask = mask.expand(Q.shape[0], self.n_heads, *scores.shape[-2:])[:, h]
                scores = scores.masked_fill(~head_mask, float("-inf"))
            w = torch.softmax(scores, dim=-1)
            heads.append(w @ k_h)
            weights.append(w)
        return self.W_o(torch.cat(heads, dim=-1)), torch.stack(weights, dim=1)
