"""Exercise: grouped-query attention (GQA) as an nn.Module.

    gqa = GroupedQueryAttention(d_model, n_heads, n_kv_heads)
    out = gqa(x, mask=None)          # x (B, T, d_model) -> out (B, T, d_model)

d_head = d_model // n_heads; n_heads is a multiple of n_kv_heads.
Parameters: W_q = nn.Linear(d_model, n_heads*d_head), W_k and W_v = nn.Linear(d_model,
n_kv_heads*d_head), W_o = nn.Linear(n_heads*d_head, d_model) (bias optional; the grader sets its
own random weights). Query head h reads KV head h // (n_heads // n_kv_heads). mask is boolean
(True = may attend), broadcastable to (B, n_heads, T, T). n_kv_heads == n_heads is plain
multi-head attention; n_kv_heads == 1 is multi-query attention.

Write the attention yourself: F.scaled_dot_product_attention and nn.MultiheadAttention are off
limits. The grader puts your module in eval mode (.eval()) before calling it, as at inference:
an nn.Dropout layer is fine (it is then the identity); F.dropout(..., training=True) is not.

What the interviewer expects you to say:
- GQA shrinks the KV cache by n_heads / n_kv_heads at almost no quality cost (Ainslie et al. 2023);
- expand K and V with repeat_interleave (consecutive query heads share a KV head), not repeat;
- compute is unchanged: every query head still attends over all keys.

Check your work:  quizprep grade gqa.py
"""
from __future__ import annotations

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int) -> None:
        super().__init__()
        raise NotImplementedError

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        raise NotImplementedError
