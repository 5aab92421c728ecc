# quizprep: exercise=gqa
# source: a one-line slip on mosaicml/llm-foundry llmfoundry/models/layers/attention.py (scaled_multihead_dot_product_attention: q = rearrange(query, 'b s (h d) -> b h s d'), k = rearrange(key, 'b s (h d) -> b h d s', h=kv_n_heads), k.repeat_interleave(n_heads // kv_n_heads, dim=1), attn_weight = q.matmul(k) * softmax_scale, causal_mask = ~ones(s, s).tril()[-s_q:, -s_k:], masked_fill with finfo.min, softmax)
# style: keys laid out (b, h, d, s) so no transpose at the matmul, the causal mask sliced from the bottom right, finfo.min fill
# adapter: einops rearranges written as view/permute, the exercise's boolean mask (True = may attend) filled like llm-foundry's key_padding_mask, is_causal off (the exercise's mask carries causality), no dropout
# expect: fail diagnosis=gqa-repeat
# bug: K and V widened with .repeat(1, n_heads // kv_n_heads, 1, 1), which tiles the KV heads [0, 1, 0, 1]: query head h reads KV head h mod kv_n_heads, not h // (n_heads // kv_n_heads)
import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.n_heads, self.kv_n_heads = n_heads, n_kv_heads
        self.head_dim = d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.head_dim)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.head_dim)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.head_dim)
        self.W_o = nn.Linear(n_heads * self.head_dim, d_model)

    def forward(self, x, mask=None):
        b, s, _ = x.shape
        q = self.W_q(x).view(b, s, self.n_heads, self.head_dim).permute(0, 2, 1, 3)
        k = self.W_k(x).view(b, s, self.kv_n_heads, self.head_dim).permute(0, 2, 3, 1)
        v = self.W_v(x).view(b, s, self.kv_n_heads, self.head_dim).permute(0, 2, 1, 3)
        if self.kv_n_heads > 1 and self.kv_n_heads < self.n_heads:
            k = k.repeat(1, self.n_heads // self.kv_n_heads, 1, 1)
            v = v.repeat(1, self.n_heads // self.kv_n_heads, 1, 1)
        softmax_scale = 1 / math.sqrt(self.head_dim)
        attn_weight = q.matmul(k) * softmax_scale
        min_val = torch.finfo(q.dtype).min
        if mask is not None:
            attn_weight = attn_weight.masked_fill(~mask, min_val)
        attn_weight = torch.softmax(attn_weight, dim=-1)
        out = attn_weight.matmul(v)
        out = out.permute(0, 2, 1, 3).reshape(b, s, self.n_heads * self.head_dim)
        return self.W_o(out)
