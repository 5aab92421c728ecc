"""Exercise: multi-head attention as an nn.Module.

    mha = MultiHeadAttention(d_model, n_heads)
    out, weights = mha(query, key, value, mask=None)

Parameters: W_q, W_k, W_v, W_o, each nn.Linear(d_model, d_model) (bias optional: the grader
overwrites whatever weights and biases your instance has with its own random values).
Shapes: query (B, n, d_model); key and value (B, m, d_model) — the same tensor as query for
self-attention, another sequence for cross-attention; mask boolean (True = may attend),
broadcastable to (B, n_heads, n, m). Returns out (B, n, d_model) and the attention weights
(B, n_heads, n, m).

Heads: d_k = d_model // n_heads; head h uses features [h*d_k, (h+1)*d_k) of each projection.
Write the attention yourself: F.scaled_dot_product_attention and nn.MultiheadAttention are off
limits (copying your attention.py solution in is fine). The grader puts your module in eval
mode (.eval()) before calling it, as at inference: an nn.Dropout layer is fine (it is then the
identity); F.dropout(..., training=True) is not.

What the interviewer expects you to say:
- split heads with view(B, T, H, d_k).transpose(1, 2), merge with the inverse transpose;
- the per-head scale is 1/√d_k, not 1/√d_model;
- W_o mixes information across heads; without it the heads never interact;
- parameters: 4·d_model² (+ 4·d_model with biases), independent of n_heads.

Check your work:  quizprep grade mha.py
"""
from __future__ import annotations

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        raise NotImplementedError

    def forward(
        self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError
