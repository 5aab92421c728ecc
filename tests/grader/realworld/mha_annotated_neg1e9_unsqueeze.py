# quizprep: exercise=mha
# style: Annotated Transformer-like MultiHeadedAttention: attention() helper with mask == 0 and masked_fill(-1e9), nn.Dropout(p), 2-D masks unsqueezed
# expect: pass
# note: masked_fill(-1e9) raises on float16 scores (-1e9 overflows half); correct in float64, float32 and bfloat16
import math

import torch
from torch import nn


def attention(query, key, value, mask=None, dropout=None):
    scores = query.matmul(key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = torch.softmax(scores, dim=-1)
    p_attn = p_attn if dropout is None else dropout(p_attn)
    return p_attn.matmul(value), p_attn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.1):
        super().__init__()
        assert d_model % n_heads == 0
        self.h = n_heads
        self.d_k = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(p=dropout)
        self.attn = None

    def _project(self, linear, x):
        nbatches = x.size(0)
        return linear(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        if mask is not None and mask.dim() == 2:
            mask = mask.unsqueeze(0).unsqueeze(1)  # (n, m) -> (1, 1, n, m): every batch entry and head
        nbatches = query.size(0)
        q = self._project(self.W_q, query)
        k = self._project(self.W_k, key)
        v = self._project(self.W_v, value)
        x, self.attn = attention(q, k, v, mask=mask, dropout=self.dropout)
        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return self.W_o(x), self.attn
