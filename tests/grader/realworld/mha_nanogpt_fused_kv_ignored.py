# quizprep: exercise=mha
# style: nanoGPT-like fused c_attn: one F.linear over the concatenated W_q/W_k/W_v, then .split(n_embd, dim=2)
# expect: fail diagnosis=kv-ignored
# bug: the fused projection is applied to `query` only, so key and value inputs are never used (self-attention on query)
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

    def forward(self, query, key, value, mask=None):
        B, T, C = query.size()
        c_attn_w = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])
        c_attn_b = torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias])
        qkv = F.linear(query, c_attn_w, c_attn_b)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in qkv.split(self.n_embd, dim=2))
        att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
        if mask is not None:
            att = att.masked_fill(mask == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).contiguous().view(B, T, C)
        return self.W_o(y), att
