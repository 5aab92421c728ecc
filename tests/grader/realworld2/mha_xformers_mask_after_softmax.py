# quizprep: exercise=mha
# style: xformers-like helper functions (split_heads / attention / merge_heads) around a thin module, `mask == False`
# expect: fail diagnosis=mask-after-softmax
# bug: the softmax runs over all keys and the masked weights are zeroed afterwards, so rows no longer sum to 1
from __future__ import annotations

import math

import torch
from torch import nn


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    b, t, d = x.shape
    return x.reshape(b, t, n_heads, d // n_heads).permute(0, 2, 1, 3)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    b, h, t, d = x.shape
    return x.permute(0, 2, 1, 3).reshape(b, t, h * d)


def masked_attention(q, k, v, mask=None):
    att = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    att = torch.softmax(att, dim=-1)
    if mask is not None:
        att = att.masked_fill(mask == False, 0.0)  # noqa: E712
    return att @ v, att


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        q = split_heads(self.W_q(query), self.n_heads)
        k = split_heads(self.W_k(key), self.n_heads)
        v = split_heads(self.W_v(value), self.n_heads)
        out, att = masked_attention(q, k, v, mask)
        return self.W_o(merge_heads(out)), att
