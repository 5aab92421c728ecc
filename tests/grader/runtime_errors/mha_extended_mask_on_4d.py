# quizprep: exercise=mha
# BERT habit: an extended mask built as mask[:, None, None, :] from what it takes for a (B, m) key mask;
# on the (n, m) and (B, 1, 1, m) masks the checks pass it adds two axes and the scores no longer broadcast
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

    def split(self, x):
        return x.view(x.size(0), -1, self.n_heads, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = self.split(self.W_q(query)), self.split(self.W_k(key)), self.split(self.W_v(value))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_k)
        if mask is not None:
            extended = mask[:, None, None, :].to(scores.dtype)
            extended = (1.0 - extended) * torch.finfo(scores.dtype).min
            scores = scores + extended
        probs = scores.softmax(dim=-1)
        ctx = (probs @ v).transpose(1, 2).contiguous().view(query.size(0), -1, self.n_heads * self.d_k)
        return self.W_o(ctx), probs
