# quizprep: exercise=gqa
# style: x-transformers-like einsum attention with the KV heads grouped, not repeated
# expect: pass
import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        self.heads, self.kv_heads = n_heads, n_kv_heads
        self.dim_head = d_model // n_heads
        self.W_q = nn.Linear(d_model, n_heads * self.dim_head, bias=False)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.dim_head, bias=False)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.dim_head, bias=False)
        self.W_o = nn.Linear(n_heads * self.dim_head, d_model, bias=False)

    def forward(self, x, mask=None):
        b, n, _ = x.shape
        groups = self.heads // self.kv_heads
        q = self.W_q(x).view(b, n, self.kv_heads, groups, self.dim_head)
        k = self.W_k(x).view(b, n, self.kv_heads, self.dim_head)
        v = self.W_v(x).view(b, n, self.kv_heads, self.dim_head)
        sim = torch.einsum("bigrd,bjgd->bgrij", q, k) * self.dim_head ** -0.5
        if mask is not None:
            mask = mask.expand(b, self.heads, n, n).reshape(b, self.kv_heads, groups, n, n)
            sim = sim.masked_fill(~mask, -torch.finfo(sim.dtype).max)
        attn = sim.softmax(dim=-1)
        out = torch.einsum("bgrij,bjgd->bigrd", attn, v)
        return self.W_o(out.reshape(b, n, self.heads * self.dim_head))
