# quizprep: exercise=mha
# style: nanoGPT-like CausalSelfAttention turned into cross-capable MHA, masked_fill(mask == 0, -inf)
# expect: fail diagnosis=scale-d-model
# bug: scores are scaled by 1/sqrt(C) with C = n_embd (d_model) instead of 1/sqrt(head size)
import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_head = n_heads
        self.n_embd = d_model
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _heads(self, x):
        B, T, C = x.size()
        return x.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        B, T, C = query.size()
        q, k, v = self._heads(self.W_q(query)), self._heads(self.W_k(key)), self._heads(self.W_v(value))
        att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(C)
        if mask is not None:
            att = att.masked_fill(mask == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).contiguous().view(B, T, C)
        return self.W_o(y), att
