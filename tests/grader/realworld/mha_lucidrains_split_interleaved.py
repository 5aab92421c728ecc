# quizprep: exercise=mha
# style: lucidrains-style module with rearrange-like helpers and einsum, masked_fill(~mask, -finfo.max)
# expect: fail diagnosis=split-interleaved
# bug: the helpers implement 'b n (d h) -> b h n d' and 'b h n d -> b n (d h)', so head h gets features h, h+H, h+2H, ...
import torch
from torch import einsum, nn


def split_heads(t, h):
    b, n, dh = t.shape
    return t.reshape(b, n, dh // h, h).permute(0, 3, 1, 2)


def merge_heads(t):
    b, h, n, d = t.shape
    return t.permute(0, 2, 3, 1).reshape(b, n, d * h)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.heads = n_heads
        self.scale = (d_model // n_heads) ** -0.5
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        h = self.heads
        q, k, v = (split_heads(t, h) for t in (self.W_q(query), self.W_k(key), self.W_v(value)))
        sim = einsum("b h i d, b h j d -> b h i j", q, k) * self.scale
        if mask is not None:
            sim = sim.masked_fill(~mask, -torch.finfo(sim.dtype).max)
        attn = sim.softmax(dim=-1)
        out = einsum("b h i j, b h j d -> b h i d", attn, v)
        return self.W_o(merge_heads(out)), attn
