# quizprep: exercise=gqa
# style: Llama-like Attention: xq/xk/xv viewed (bsz, seqlen, heads, head_dim), KV heads expanded before the transpose, additive -inf mask
# expect: fail diagnosis=gqa-repeat
# bug: K/V heads are expanded with .repeat (tiling kv0, kv1, kv0, kv1, ...) instead of repeat_interleave
import math

import torch
import torch.nn.functional as F
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.n_heads = n_heads
        self.n_kv_heads = n_kv_heads
        self.n_rep = n_heads // n_kv_heads
        self.head_dim = d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.W_o = nn.Linear(n_heads * self.head_dim, d_model, bias=False)

    def forward(self, x, mask=None):
        bsz, seqlen, _ = x.shape
        xq = self.W_q(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = self.W_k(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim).repeat(1, 1, self.n_rep, 1)
        xv = self.W_v(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim).repeat(1, 1, self.n_rep, 1)

        xq, xk, xv = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
        scores = xq @ xk.transpose(2, 3) / math.sqrt(self.head_dim)
        if mask is not None:
            neg = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device).masked_fill(~mask, float("-inf"))
            scores = scores + neg
        probs = F.softmax(scores, dim=-1)
        return self.W_o((probs @ xv).transpose(1, 2).reshape(bsz, seqlen, -1))
