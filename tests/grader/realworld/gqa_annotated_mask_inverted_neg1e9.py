# quizprep: exercise=gqa
# style: Annotated Transformer-like: list comprehension over projections, repeat_interleave for K/V, -1e9 fill via torch.where
# expect: fail diagnosis=mask-inverted
# bug: the -1e9 fill goes where mask == 1, hiding the keys the mask allows (the Annotated Transformer tests mask == 0)
import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.h = n_heads
        self.h_kv = n_kv_heads
        self.d_k = d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.d_k)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d_k)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d_k)
        self.W_o = nn.Linear(n_heads * self.d_k, d_model)

    def forward(self, x, mask=None):
        nbatches = x.size(0)
        query, key, value = [
            lin(x).view(nbatches, -1, heads, self.d_k).transpose(1, 2)
            for lin, heads in ((self.W_q, self.h), (self.W_k, self.h_kv), (self.W_v, self.h_kv))
        ]
        key = key.repeat_interleave(self.h // self.h_kv, dim=1)
        value = value.repeat_interleave(self.h // self.h_kv, dim=1)
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(self.d_k)
        if mask is not None:
            scores = torch.where(mask == 1, -1e9, scores)
        p_attn = scores.softmax(dim=-1)
        x = torch.matmul(p_attn, value).transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return self.W_o(x)
