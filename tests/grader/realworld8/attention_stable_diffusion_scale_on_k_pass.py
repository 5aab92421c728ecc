# quizprep: exercise=attention
# source: CompVis/stable-diffusion ldm/modules/attention.py @ 09bf6dd7c1d3f4c1add1a8de6fd4acce075b9477 (CrossAttention: k = to_k(context) * self.scale, einsum_op_compvis: s = einsum('b i d, b j d -> b i j'), s.softmax(dim=-1, dtype=s.dtype), einsum('b i j, b j d -> b i d'); einsum_op_slice_1's query slices; max_neg_value(t) = -finfo(t.dtype).max)
# style: the scale folded into k, the query axis walked in slices into a preallocated result, einsum, softmax with an explicit dtype
# adapter: q, k, v given (no projections), leading dims flattened to the einsum's b, the mask filled with max_neg_value before the softmax (the repo's mask path), the weights kept per slice to return them
# expect: pass
import torch
from torch import einsum


def max_neg_value(t):
    return -torch.finfo(t.dtype).max


def scaled_dot_product_attention(q, k, v, mask=None):
    lead, n, m, d = q.shape[:-2], q.shape[-2], k.shape[-2], q.shape[-1]
    scale = d ** -0.5
    q3 = q.reshape(-1, n, d)
    k3 = (k * scale).reshape(-1, m, d)
    v3 = v.reshape(-1, m, v.shape[-1])
    keep = None if mask is None else mask.bool().expand(*lead, n, m).reshape(-1, n, m)
    r = torch.zeros(q3.shape[0], n, v3.shape[2], device=q.device, dtype=q.dtype)
    w = torch.zeros(q3.shape[0], n, m, device=q.device, dtype=q.dtype)
    slice_size = 2
    for i in range(0, n, slice_size):
        end = i + slice_size
        s = einsum("b i d, b j d -> b i j", q3[:, i:end], k3)
        if keep is not None:
            s = s.masked_fill(~keep[:, i:end], max_neg_value(s))
        s = s.softmax(dim=-1, dtype=s.dtype)
        w[:, i:end] = s
        r[:, i:end] = einsum("b i j, b j d -> b i d", s, v3)
    return r.reshape(*lead, n, v.shape[-1]), w.reshape(*lead, n, m)
