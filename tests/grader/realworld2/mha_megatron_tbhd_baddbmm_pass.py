# quizprep: exercise=mha
# style: Megatron-like core attention: (s, b, np, hn) layouts, baddbmm with alpha=1/norm_factor, attention dropout module
# expect: pass
from __future__ import annotations

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, attention_dropout=0.0):
        super().__init__()
        self.num_attention_heads = n_heads
        self.hidden_size_per_attention_head = d_model // n_heads
        self.norm_factor = math.sqrt(self.hidden_size_per_attention_head)
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)
        self.attention_dropout = nn.Dropout(attention_dropout)

    def _to_sbhd(self, x):
        # (b, s, h) -> (s, b, np, hn)
        b, s, _ = x.shape
        x = x.transpose(0, 1)
        return x.reshape(s, b, self.num_attention_heads, self.hidden_size_per_attention_head)

    def forward(self, query, key, value, mask=None):
        query_layer = self._to_sbhd(self.W_q(query))
        key_layer = self._to_sbhd(self.W_k(key))
        value_layer = self._to_sbhd(self.W_v(value))
        sq, b, np_, hn = query_layer.shape
        sk = key_layer.shape[0]

        # [sq, b, np, hn] -> [sq, b * np, hn] -> [b * np, sq, hn]
        q2 = query_layer.reshape(sq, b * np_, hn).transpose(0, 1)
        k2 = key_layer.reshape(sk, b * np_, hn).transpose(0, 1)
        matmul_input_buffer = torch.empty(b * np_, sq, sk, dtype=q2.dtype, device=q2.device)
        matmul_result = torch.baddbmm(
            matmul_input_buffer, q2, k2.transpose(1, 2), beta=0.0, alpha=1.0 / self.norm_factor
        )
        attention_scores = matmul_result.view(b, np_, sq, sk)
        if mask is not None:
            attention_scores = attention_scores.masked_fill(mask.logical_not(), float("-inf"))
        attention_probs = torch.softmax(attention_scores, dim=-1)
        probs = self.attention_dropout(attention_probs)

        v2 = value_layer.reshape(sk, b * np_, hn).transpose(0, 1)
        context = torch.bmm(probs.view(b * np_, sq, sk), v2)
        # [b * np, sq, hn] -> [sq, b, np * hn] -> [b, sq, h]
        context = context.view(b, np_, sq, hn).permute(2, 0, 1, 3).reshape(sq, b, np_ * hn)
        output = self.W_o(context.transpose(0, 1))
        return output, attention_probs
