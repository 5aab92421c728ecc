# quizprep: exercise=gqa
# style: Megatron-like: (s, b, np, hn) layout, KV heads expanded with repeat_interleave, baddbmm with alpha
# expect: fail diagnosis=scale-seq-len
# bug: the norm factor is sqrt(sq), the sequence length (dim 0 of the (s, b, np, hn) layout), instead of sqrt(hn)
from __future__ import annotations

import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.np = n_heads
        self.ng = n_kv_heads
        self.hn = d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.hn, bias=False)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.hn, bias=False)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.hn, bias=False)
        self.W_o = nn.Linear(n_heads * self.hn, d_model, bias=False)

    def forward(self, x, mask=None):
        b, s, _ = x.shape
        hidden = x.transpose(0, 1)  # [s, b, h]
        q = self.W_q(hidden).view(s, b, self.np, self.hn)
        k = self.W_k(hidden).view(s, b, self.ng, self.hn)
        v = self.W_v(hidden).view(s, b, self.ng, self.hn)
        rep = self.np // self.ng
        k = k.repeat_interleave(rep, dim=2)
        v = v.repeat_interleave(rep, dim=2)

        norm_factor = math.sqrt(q.size(0))
        q2 = q.reshape(s, b * self.np, self.hn).transpose(0, 1)
        k2 = k.reshape(s, b * self.np, self.hn).transpose(0, 1)
        buf = torch.empty(b * self.np, s, s, dtype=q.dtype, device=q.device)
        scores = torch.baddbmm(buf, q2, k2.transpose(1, 2), beta=0.0, alpha=1.0 / norm_factor)
        scores = scores.view(b, self.np, s, s)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        probs = torch.softmax(scores, dim=-1)

        v2 = v.reshape(s, b * self.np, self.hn).transpose(0, 1)
        ctx = torch.bmm(probs.view(b * self.np, s, s), v2)  # [b*np, s, hn]
        ctx = ctx.view(b, self.np, s, self.hn).permute(0, 2, 1, 3).reshape(b, s, self.np * self.hn)
        return self.W_o(ctx)
