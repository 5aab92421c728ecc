# quizprep: exercise=mha
# style: Annotated Transformer-like MultiHeadedAttention with an attention() helper, mask == 0 with -1e9 (via torch.where)
# expect: fail diagnosis=scale-seq-len
# bug: the helper reads d_k = query.size(-2), which on (B, H, T, d) tensors is the query length T
import math

import torch
from torch import nn


def attention(query, key, value, mask=None):
    d_k = query.size(-2)
    scores = query.matmul(key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = torch.where(mask == 0, -1e9, scores)
    p_attn = torch.softmax(scores, dim=-1)
    return p_attn.matmul(value), p_attn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.h = n_heads
        self.d_k = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _project(self, linear, x):
        return linear(x).view(x.size(0), -1, self.h, self.d_k).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        nbatches = query.size(0)
        q, k, v = (self._project(lin, x) for lin, x in ((self.W_q, query), (self.W_k, key), (self.W_v, value)))
        x, p_attn = attention(q, k, v, mask=mask)
        x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return self.W_o(x), p_attn
