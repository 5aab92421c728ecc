# quizprep: exercise=mha
# style: Llama: 4-D code, (B, H, T, d) heads, softmax in float32 then type_as, additive -inf mask
# expect: pass
import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model, bias=False)

    def forward(self, query, key, value, mask=None):
        bsz, seqlen, _ = query.shape
        xq = self.W_q(query).view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        xk = self.W_k(key).view(bsz, key.shape[1], self.n_heads, self.head_dim).transpose(1, 2)
        xv = self.W_v(value).view(bsz, value.shape[1], self.n_heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + torch.zeros_like(scores).masked_fill(~mask, float("-inf"))
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, xv).transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.W_o(output), scores
