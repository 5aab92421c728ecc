# quizprep: exercise=mha
# style: Hugging Face BERT-like self-attention (hidden_states, transpose_for_scores, additive extended mask built from the boolean one)
# expect: fail diagnosis=kv-ignored
# bug: the layer is written as self-attention: hidden_states = query feeds W_k and W_v too, so key and value are never read (wrong for cross-attention)
from __future__ import annotations

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, attention_probs_dropout_prob=0.1):
        super().__init__()
        self.num_attention_heads = n_heads
        self.attention_head_size = d_model // n_heads
        self.all_head_size = n_heads * self.attention_head_size
        self.W_q = nn.Linear(d_model, self.all_head_size)
        self.W_k = nn.Linear(d_model, self.all_head_size)
        self.W_v = nn.Linear(d_model, self.all_head_size)
        self.W_o = nn.Linear(self.all_head_size, d_model)
        self.dropout = nn.Dropout(attention_probs_dropout_prob)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        hidden_states = query
        query_layer = self.transpose_for_scores(self.W_q(hidden_states))
        key_layer = self.transpose_for_scores(self.W_k(hidden_states))
        value_layer = self.transpose_for_scores(self.W_v(hidden_states))

        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        if mask is not None:
            dtype = attention_scores.dtype
            extended_attention_mask = (1.0 - mask.to(dtype)) * torch.finfo(dtype).min
            attention_scores = attention_scores + extended_attention_mask
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        context_layer = torch.matmul(self.dropout(attention_probs), value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        context_layer = context_layer.view(context_layer.size()[:-2] + (self.all_head_size,))
        return self.W_o(context_layer), attention_probs
