# quizprep: exercise=mha
# style: einsum projections' output split with view+transpose, merged back with contiguous().view
# expect: fail diagnosis=merge-no-transpose
# bug: the heads are merged with .contiguous().view(B, n, D) without transposing (B, H, n, d_k) back first
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.d_model = d_model
        self.n_heads = n_heads
        self.head_dim = d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        B, n, _ = query.shape
        m = key.shape[1]
        q = self.W_q(query).view(B, n, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.W_k(key).view(B, m, self.n_heads, self.head_dim).transpose(1, 2)
        v = self.W_v(value).view(B, m, self.n_heads, self.head_dim).transpose(1, 2)
        scores = torch.einsum("bhid,bhjd->bhij", q, k) / self.head_dim ** 0.5
        if mask is not None:
            scores = scores.masked_fill(mask.logical_not(), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        ctx = torch.einsum("bhij,bhjd->bhid", weights, v)
        ctx = ctx.contiguous().view(B, n, self.d_model)
        return self.W_o(ctx), weights
