# quizprep: exercise=mha
# style: nanoGPT: one fused projection for q, k, v split with chunk, (B, T, H, d) view then transpose(1, 2)
# expect: pass
import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_head, self.n_embd = n_heads, d_model
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(0.1)

    def forward(self, query, key, value, mask=None):
        B, T, C = query.size()
        if query is key and key is value:
            weight = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])
            bias = torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias])
            q, k, v = F.linear(query, weight, bias).chunk(3, dim=-1)
        else:
            q, k, v = self.W_q(query), self.W_k(key), self.W_v(value)
        S = k.size(1)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, S, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, S, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        if mask is not None:
            att = att.masked_fill(mask == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = self.attn_dropout(att) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.W_o(y), att
