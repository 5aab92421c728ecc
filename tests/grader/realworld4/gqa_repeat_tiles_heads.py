# quizprep: exercise=gqa
# style: (B, H, T, d) layout, K/V expanded with Tensor.repeat on the head axis
# expect: fail diagnosis=gqa-repeat
# bug: k.repeat(1, g, 1, 1) tiles the KV heads (0,1,0,1) instead of repeating each one (0,0,1,1)
import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.d_head = d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.d_head)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d_head)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d_head)
        self.W_o = nn.Linear(n_heads * self.d_head, d_model)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        g = self.n_heads // self.n_kv_heads
        q = self.W_q(x).view(B, T, self.n_heads, self.d_head).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.n_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.n_kv_heads, self.d_head).transpose(1, 2)
        k = k.repeat(1, g, 1, 1)
        v = v.repeat(1, g, 1, 1)
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            att = att.masked_fill(~mask, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, -1)
        return self.W_o(y)
