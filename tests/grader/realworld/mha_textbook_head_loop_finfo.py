# quizprep: exercise=mha
# style: textbook explicit loop over heads: slice each projection's columns, attend, concatenate, project; finfo.min fill
# expect: pass
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
        B, n, _ = Q.shape
        m = K.shape[1]
        if mask is not None:
            mask = mask.expand(B, self.n_heads, n, m)
        heads, weights = [], []
        for h in range(self.n_heads):
            cols = slice(h * self.d_k, (h + 1) * self.d_k)
            q_h, k_h, v_h = Q[..., cols], K[..., cols], V[..., cols]
            scores = q_h @ k_h.transpose(1, 2) / math.sqrt(self.d_k)
            if mask is not None:
                scores = scores.masked_fill(~mask[:, h], torch.finfo(scores.dtype).min)
            w = torch.softmax(scores, dim=-1)
            heads.append(w @ v_h)
            weights.append(w)
        return self.W_o(torch.cat(heads, dim=-1)), torch.stack(weights, dim=1)
