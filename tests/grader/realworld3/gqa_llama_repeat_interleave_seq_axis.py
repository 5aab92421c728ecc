# quizprep: exercise=gqa
# style: Llama-like module; the heads are expanded after the transpose, on the wrong axis
# expect: fail diagnosis=repeat-wrong-axis
# bug: repeat_interleave(dim=2) on (B, G, T, d) repeats positions, not KV heads
import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.head_dim, bias=False)
        self.W_o = nn.Linear(n_heads * self.head_dim, d_model, bias=False)

    def forward(self, x, mask=None):
        bsz, seqlen, _ = x.shape
        xq = self.W_q(x).view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        xk = self.W_k(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim).transpose(1, 2)
        xv = self.W_v(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim).transpose(1, 2)
        n_rep = self.n_heads // self.n_kv_heads
        xk = torch.repeat_interleave(xk, n_rep, dim=2)
        xv = torch.repeat_interleave(xv, n_rep, dim=2)
        scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        probs = torch.softmax(scores.float(), dim=-1).type_as(xq)
        out = torch.matmul(probs, xv).transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.W_o(out)
