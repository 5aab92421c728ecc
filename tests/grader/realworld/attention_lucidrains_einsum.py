# quizprep: exercise=attention
# style: lucidrains-style: q = q * scale, einsum('... i d, ... j d -> ... i j'), masked_fill(~mask, -finfo.max)
# expect: pass
import torch
from torch import einsum


def exists(val):
    return val is not None


def scaled_dot_product_attention(q, k, v, mask=None):
    scale = q.shape[-1] ** -0.5
    q = q * scale
    sim = einsum("... i d, ... j d -> ... i j", q, k)
    if exists(mask):
        max_neg_value = -torch.finfo(sim.dtype).max
        sim = sim.masked_fill(~mask, max_neg_value)
    attn = sim.softmax(dim=-1)
    out = einsum("... i j, ... j d -> ... i d", attn, v)
    return out, attn
