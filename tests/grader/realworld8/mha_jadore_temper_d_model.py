# quizprep: exercise=mha
# source: jadore801120/attention-is-all-you-need-pytorch transformer/SubLayers.py @ 144902aa6fc57cfa294db487f796dad600210d5e and transformer/Modules.py @ 002815545bf743d0bf2b9d172af047b37e20b6e9: MultiHeadAttention builds `self.attention = ScaledDotProductAttention(d_model)`, whose temper is np.power(d_model, 0.5); the repo later passed temperature=d_k ** 0.5 (the fix)
# style: heads folded into the batch as h·B + b with q.repeat(n_head, 1, 1) and per-head weight stacks (n_head, d_model, d_k), bmm, the mask tiled with .repeat (right for that h·B + b layout)
# adapter: the per-head stacks are views of the exercise's W_q/W_k/W_v (nn.Linear, no bias); the heads are merged with the repo's later torch.cat(torch.split(outputs, mb_size, dim=0), dim=-1) (its first merge, outputs.view(mb_size, len_q, -1), was a second bug); no residual, layer norm or dropout (not in the exercise); weights returned as (B, H, n, m); the exercise's mask (True = may attend) inverted
# expect: fail diagnosis=scale-d-model
# bug: the temper is √d_model, not √d_k: every head's scores are divided by √n_heads too much
import numpy as np
import torch
from torch import nn


class ScaledDotProductAttention(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.temper = np.power(d_model, 0.5)

    def forward(self, q, k, v, attn_mask=None):
        attn = torch.bmm(q, k.transpose(1, 2)) / self.temper
        if attn_mask is not None:
            attn = attn.masked_fill(attn_mask, -float("inf"))
        attn = torch.softmax(attn, dim=-1)
        return torch.bmm(attn, v), attn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_head, self.d_k = n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model)
        self.attention = ScaledDotProductAttention(d_model)

    def _stack(self, linear):
        return linear.weight.view(self.n_head, self.d_k, -1).transpose(1, 2)

    def forward(self, q, k, v, mask=None):
        n_head, d_k = self.n_head, self.d_k
        mb_size, len_q, d_model = q.size()
        len_k = k.size(1)
        q_s = q.repeat(n_head, 1, 1).view(n_head, -1, d_model)
        k_s = k.repeat(n_head, 1, 1).view(n_head, -1, d_model)
        v_s = v.repeat(n_head, 1, 1).view(n_head, -1, d_model)
        q_s = torch.bmm(q_s, self._stack(self.W_q)).view(-1, len_q, d_k)
        k_s = torch.bmm(k_s, self._stack(self.W_k)).view(-1, len_k, d_k)
        v_s = torch.bmm(v_s, self._stack(self.W_v)).view(-1, len_k, d_k)
        attn_mask = None
        if mask is not None:
            attn_mask = (~mask.bool()).expand(mb_size, 1, len_q, len_k)[:, 0].repeat(n_head, 1, 1)
        outputs, attns = self.attention(q_s, k_s, v_s, attn_mask=attn_mask)
        outputs = torch.cat(torch.split(outputs, mb_size, dim=0), dim=-1)
        weights = attns.view(n_head, mb_size, len_q, len_k).transpose(0, 1)
        return self.W_o(outputs), weights
