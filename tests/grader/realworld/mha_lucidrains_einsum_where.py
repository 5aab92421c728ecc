# quizprep: exercise=mha
# style: lucidrains-style module: rearrange-like helpers for 'b n (h d) -> b h n d', einsum, torch.where with finfo.min, 2-D masks lifted with [None, None]
# expect: pass
import torch
from torch import einsum, nn


def split_heads(t, h):
    b, n, hd = t.shape
    return t.reshape(b, n, h, hd // h).permute(0, 2, 1, 3)


def merge_heads(t):
    b, h, n, d = t.shape
    return t.permute(0, 2, 1, 3).reshape(b, n, h * d)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        dim_head = d_model // n_heads
        self.heads = n_heads
        self.scale = dim_head**-0.5
        self.W_q = nn.Linear(d_model, d_model, bias=False)
        self.W_k = nn.Linear(d_model, d_model, bias=False)
        self.W_v = nn.Linear(d_model, d_model, bias=False)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        h = self.heads
        q, k, v = self.W_q(query), self.W_k(key), self.W_v(value)
        q, k, v = (split_heads(t, h) for t in (q, k, v))
        sim = einsum("b h i d, b h j d -> b h i j", q, k) * self.scale
        if mask is not None:
            if mask.ndim == 2:
                mask = mask[None, None]
            sim = torch.where(mask, sim, torch.finfo(sim.dtype).min)
        attn = sim.softmax(dim=-1)
        out = einsum("b h i j, b h j d -> b h i d", attn, v)
        return self.W_o(merge_heads(out)), attn
