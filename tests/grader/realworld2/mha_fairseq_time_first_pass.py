# quizprep: exercise=mha
# style: fairseq-like MultiheadAttention: time-first (T, B, C) internally, q * self.scaling, heads folded into bsz*num_heads for bmm
# expect: pass
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.1):
        super().__init__()
        self.embed_dim = d_model
        self.num_heads = n_heads
        self.head_dim = d_model // n_heads
        self.scaling = self.head_dim ** -0.5
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout_module = nn.Dropout(dropout)

    def _fold_heads(self, x, bsz):
        # (T, B, C) -> (B*H, T, head_dim), batch-major so that row b*H + h is batch b, head h
        tgt = x.size(0)
        return x.contiguous().view(tgt, bsz * self.num_heads, self.head_dim).transpose(0, 1)

    def forward(self, query, key, value, mask=None):
        query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        tgt_len, bsz, embed_dim = query.size()
        src_len = key.size(0)

        q = self.W_q(query) * self.scaling
        k = self.W_k(key)
        v = self.W_v(value)
        q, k, v = (self._fold_heads(t, bsz) for t in (q, k, v))

        attn_weights = torch.bmm(q, k.transpose(1, 2))
        if mask is not None:
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len)
            attn_weights = attn_weights.masked_fill(~mask, float("-inf"))
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)

        attn_weights_float = F.softmax(attn_weights, dim=-1, dtype=torch.float32)
        attn_weights = attn_weights_float.type_as(attn_weights)
        attn_probs = self.dropout_module(attn_weights)

        attn = torch.bmm(attn_probs, v)
        attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, embed_dim)
        attn = self.W_o(attn).transpose(0, 1)
        return attn, attn_weights.view(bsz, self.num_heads, tgt_len, src_len)
