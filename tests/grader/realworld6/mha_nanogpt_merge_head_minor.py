# quizprep: exercise=mha
# style: nanoGPT CausalSelfAttention made cross-capable: q/k/v projections, .view(B, T, n_head, hs).transpose(1, 2) to split, att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1))), masked_fill(mask == 0, float('-inf')), F.softmax
# expect: fail diagnosis=merge-interleaved
# bug: heads merged with y.permute(0, 2, 3, 1).reshape(B, T, C): the feature axis ends up ordered (d_k, head) instead of (head, d_k), so W_o sees the head outputs interleaved feature by feature; exact when n_heads == 1
import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        assert d_model % n_heads == 0
        self.n_head = n_heads
        self.n_embd = d_model
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        B, T, C = query.size()
        S = key.size(1)
        hs = C // self.n_head
        q = self.W_q(query).view(B, T, self.n_head, hs).transpose(1, 2)
        k = self.W_k(key).view(B, S, self.n_head, hs).transpose(1, 2)
        v = self.W_v(value).view(B, S, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        if mask is not None:
            att = att.masked_fill(mask == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v  # (B, nh, T, hs)
        y = y.permute(0, 2, 3, 1).reshape(B, T, C)
        return self.W_o(y), att
