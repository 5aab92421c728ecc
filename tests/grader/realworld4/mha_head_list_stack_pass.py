# quizprep: exercise=mha
# style: heads as a Python list of feature slices, a free attention helper, torch.stack for the weights and torch.cat for the outputs
# expect: pass
from __future__ import annotations

import math

import torch
from torch import nn


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, keep: torch.Tensor | None):
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if keep is not None:
        s = s.masked_fill(~keep, float("-inf"))
    p = s.softmax(-1)
    return p @ v, p


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        assert d_model % n_heads == 0
        self.h = n_heads
        self.dk = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        Q, K, V = self.W_q(query), self.W_k(key), self.W_v(value)
        outs, ws = [], []
        for h in range(self.h):
            sl = slice(h * self.dk, (h + 1) * self.dk)
            keep = None
            if mask is not None:
                keep = mask if mask.dim() < 4 else mask[:, h] if mask.size(1) > 1 else mask[:, 0]
            o, w = attend(Q[..., sl], K[..., sl], V[..., sl], keep)
            outs.append(o)
            ws.append(w)
        return self.W_o(torch.cat(outs, dim=-1)), torch.stack(ws, dim=1)
