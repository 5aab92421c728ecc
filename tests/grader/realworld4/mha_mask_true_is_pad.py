# quizprep: exercise=mha
# style: fairseq-minded module that treats the boolean mask as "is padding" (key_padding_mask convention)
# expect: fail diagnosis=mask-inverted
# bug: masked_fill(mask, -inf) hides exactly the keys the caller allowed
import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.num_heads = n_heads
        self.head_dim = d_model // n_heads
        self.scaling = self.head_dim ** -0.5
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        bsz, tgt_len, embed_dim = query.shape
        src_len = key.shape[1]
        q = self.W_q(query) * self.scaling
        k = self.W_k(key)
        v = self.W_v(value)
        q = q.view(bsz, tgt_len, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.view(bsz, src_len, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.view(bsz, src_len, self.num_heads, self.head_dim).transpose(1, 2)
        attn_weights = torch.matmul(q, k.transpose(2, 3))
        if mask is not None:
            attn_weights = attn_weights.masked_fill(mask, float("-inf"))
        attn_probs = F.softmax(attn_weights, dim=-1)
        attn = torch.matmul(attn_probs, v).transpose(1, 2).reshape(bsz, tgt_len, embed_dim)
        return self.W_o(attn), attn_probs
