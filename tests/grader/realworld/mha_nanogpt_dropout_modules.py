# quizprep: exercise=mha
# style: nanoGPT-like CausalSelfAttention turned into cross-capable MHA: .view(B, T, n_head, hs).transpose(1, 2), attn/resid nn.Dropout modules
# expect: pass
import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.1):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_head = n_heads
        self.n_embd = d_model
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def _heads(self, x):
        B, T, C = x.size()
        return x.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        B, T, C = query.size()
        q = self._heads(self.W_q(query))
        k = self._heads(self.W_k(key))
        v = self._heads(self.W_v(value))
        att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        if mask is not None:
            att = att.masked_fill(mask == 0, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = torch.matmul(att, v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.W_o(y)), att
