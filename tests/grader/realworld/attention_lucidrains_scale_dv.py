# quizprep: exercise=attention
# style: lucidrains-style einsum with a scale computed once, masked_fill(~mask, -finfo.max)
# expect: fail diagnosis=scale-dv
# bug: the scale is taken from the value dimension, v.shape[-1] ** -0.5
import torch
from torch import einsum


def scaled_dot_product_attention(q, k, v, mask=None):
    scale = v.shape[-1] ** -0.5
    sim = einsum("... i d, ... j d -> ... i j", q, k) * scale
    if mask is not None:
        sim = sim.masked_fill(~mask, -torch.finfo(sim.dtype).max)
    attn = sim.softmax(dim=-1)
    return einsum("... i j, ... j d -> ... i d", attn, v), attn
