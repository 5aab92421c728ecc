# quizprep: exercise=mha
# source: OpenNMT/OpenNMT-py onmt/modules/multi_headed_attn.py (MultiHeadedAttention.forward: `mask = mask.unsqueeze(1)  # [B, 1, 1, T_values]` for its (B, 1, T) masks)
# style: shape() / unshape() helpers, query scaled before the matmul, masked_fill with -1e18, softmax in float then back
# expect: fail diagnosis=mask-extra-axis
# bug: OpenNMT's masks are (B, 1, m) and get their head axis from unsqueeze(1); this exercise's masks already broadcast to (B, H, n, m), so a (B, 1, n, m) or (B, 1, 1, m) mask gains a fifth axis and no longer broadcasts against the (B, H, n, m) scores
import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.head_count = n_heads
        self.dim_per_head = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        batch_size = key.size(0)

        def shape(x):
            return x.view(batch_size, -1, self.head_count, self.dim_per_head).transpose(1, 2)

        def unshape(x):
            return x.transpose(1, 2).contiguous().view(batch_size, -1, self.head_count * self.dim_per_head)

        key_up, value_up, query_up = shape(self.W_k(key)), shape(self.W_v(value)), shape(self.W_q(query))
        query_up = query_up / math.sqrt(self.dim_per_head)
        scores = torch.matmul(query_up, key_up.transpose(2, 3)).float()
        if mask is not None:
            mask = mask.unsqueeze(1)  # [B, 1, 1, T_values]
            scores = scores.masked_fill(~mask, -1e18)
        attn = torch.softmax(scores, dim=-1).to(query_up.dtype)
        context = unshape(torch.matmul(attn, value_up))
        return self.W_o(context), attn
