# quizprep: exercise=mha
# style: T5-like attention block (shape/unshape helpers, no relative position bias), scale added by the learner
# expect: fail diagnosis=scale-d-model
# bug: scores divided by sqrt(d_model) (T5's inner_dim) instead of the per-head sqrt(d_k)
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.key_value_proj_dim = d_model // n_heads
        self.inner_dim = n_heads * self.key_value_proj_dim
        self.W_q = nn.Linear(d_model, self.inner_dim, bias=False)
        self.W_k = nn.Linear(d_model, self.inner_dim, bias=False)
        self.W_v = nn.Linear(d_model, self.inner_dim, bias=False)
        self.W_o = nn.Linear(self.inner_dim, d_model, bias=False)

    def forward(self, query, key, value, mask=None):
        batch_size = query.shape[0]

        def shape(states):
            return states.view(batch_size, -1, self.n_heads, self.key_value_proj_dim).transpose(1, 2)

        def unshape(states):
            return states.transpose(1, 2).contiguous().view(batch_size, -1, self.inner_dim)

        query_states = shape(self.W_q(query))
        key_states = shape(self.W_k(key))
        value_states = shape(self.W_v(value))

        scores = torch.matmul(query_states, key_states.transpose(3, 2))
        scores = scores / self.inner_dim ** 0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        attn_weights = F.softmax(scores.float(), dim=-1).type_as(scores)
        attn_output = unshape(torch.matmul(attn_weights, value_states))
        return self.W_o(attn_output), attn_weights
