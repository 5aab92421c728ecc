# quizprep: exercise=gqa
# style: Llama-like Attention: xq/xk/xv viewed (bsz, seqlen, heads, head_dim), KV heads repeated via expand + reshape, additive -inf mask
# expect: pass
import math

import torch
import torch.nn.functional as F
from torch import nn


def repeat_kv(x, n_rep):
    # (bsz, seqlen, n_kv, hd) -> (bsz, seqlen, n_kv * n_rep, hd), each KV head copied n_rep times in a row
    if n_rep == 1:
        return x
    bsz, seqlen, n_kv, hd = x.shape
    copies = x.unsqueeze(3).expand(bsz, seqlen, n_kv, n_rep, hd)
    return copies.reshape(bsz, seqlen, n_kv * n_rep, hd)


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
        xk = self.W_k(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xv = self.W_v(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xk, xv = repeat_kv(xk, self.n_rep), repeat_kv(xv, self.n_rep)

        xq, xk, xv = (t.transpose(1, 2) for t in (xq, xk, xv))
        scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            bias = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)
            scores = scores + bias.masked_fill(~mask, float("-inf"))
        probs = F.softmax(scores, dim=-1)
        out = torch.matmul(probs, xv).transpose(1, 2).reshape(bsz, seqlen, -1)
        return self.W_o(out)
