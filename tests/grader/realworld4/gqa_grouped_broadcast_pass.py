# quizprep: exercise=gqa
# style: queries reshaped to (B, n_kv, group, T, d) and matmul broadcast against (B, n_kv, 1, T, d) keys: no copy of K/V
# expect: pass
import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.n_heads = n_heads
        self.n_kv = n_kv_heads
        self.d_head = d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.d_head, bias=False)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d_head, bias=False)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d_head, bias=False)
        self.W_o = nn.Linear(n_heads * self.d_head, d_model, bias=False)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        g = self.n_heads // self.n_kv
        q = self.W_q(x).view(B, T, self.n_kv, g, self.d_head).permute(0, 2, 3, 1, 4)
        k = self.W_k(x).view(B, T, self.n_kv, self.d_head).transpose(1, 2).unsqueeze(2)
        v = self.W_v(x).view(B, T, self.n_kv, self.d_head).transpose(1, 2).unsqueeze(2)
        s = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)  # (B, n_kv, g, T, T)
        if mask is not None:
            m = torch.broadcast_to(mask, (B, self.n_heads, T, T)).reshape(B, self.n_kv, g, T, T)
            s = s.masked_fill(~m, float("-inf"))
        p = torch.softmax(s, dim=-1)
        o = (p @ v).reshape(B, self.n_heads, T, self.d_head).transpose(1, 2).reshape(B, T, -1)
        return self.W_o(o)
