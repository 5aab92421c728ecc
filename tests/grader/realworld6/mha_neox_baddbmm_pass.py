# quizprep: exercise=mha
# style: GPT-NeoX _attn: heads folded into the batch, scores from torch.baddbmm on an empty tensor with beta=0 and alpha=1/norm_factor, mask filled with finfo(dtype).min via torch.where, softmax then .to(value dtype)
# expect: pass
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.num_attention_heads = n_heads
        self.head_size = d_model // n_heads
        self.norm_factor = math.sqrt(self.head_size)
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def _split(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.num_attention_heads, self.head_size).permute(0, 2, 1, 3)

    def _attn(self, query, key, value, attention_mask=None):
        batch_size, num_heads, query_length, attn_head_size = query.size()
        key_length = key.size(-2)
        query = query.reshape(batch_size * num_heads, query_length, attn_head_size)
        key = key.reshape(batch_size * num_heads, key_length, attn_head_size)
        attn_scores = torch.zeros(batch_size * num_heads, query_length, key_length,
                                  dtype=query.dtype, device=key.device)
        attn_scores = torch.baddbmm(attn_scores, query, key.transpose(1, 2), beta=0.0,
                                    alpha=1.0 / self.norm_factor)
        attn_scores = attn_scores.view(batch_size, num_heads, query_length, key_length)
        if attention_mask is not None:
            mask_value = torch.finfo(attn_scores.dtype).min
            mask_value = torch.tensor(mask_value, dtype=attn_scores.dtype, device=attn_scores.device)
            attn_scores = torch.where(attention_mask, attn_scores, mask_value)
        attn_weights = nn.functional.softmax(attn_scores, dim=-1).to(value.dtype)
        attn_output = torch.matmul(attn_weights, value)
        return attn_output, attn_weights

    def forward(self, query, key, value, mask=None):
        b, t, c = query.shape
        q, k, v = self._split(self.W_q(query)), self._split(self.W_k(key)), self._split(self.W_v(value))
        out, weights = self._attn(q, k, v, mask)
        out = out.permute(0, 2, 1, 3).contiguous().view(b, t, c)
        return self.W_o(out), weights
