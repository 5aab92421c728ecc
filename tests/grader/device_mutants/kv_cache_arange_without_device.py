# quizprep: exercise=kv-cache
# Correct on the CPU, but builds its masks and buffers without device=: fails on a GPU.
# expect: check=device diagnosis=device-tensor-without-device
import math

import torch


def append_kv(cache_k, cache_v, k, v):
    return torch.cat((cache_k, k), 2), torch.cat((cache_v, v), 2)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    batch, new, _ = x.shape
    d = W_q.shape[0] // n_heads
    groups = W_k.shape[0] // d
    q = torch.einsum("btm,om->bto", x, W_q).view(batch, new, groups, n_heads // groups, d).permute(0, 2, 3, 1, 4)
    k = torch.einsum("btm,om->bto", x, W_k).view(batch, new, groups, d).transpose(1, 2)
    v = torch.einsum("btm,om->bto", x, W_v).view(batch, new, groups, d).transpose(1, 2)
    cache_k, cache_v = append_kv(cache_k, cache_v, k, v)
    seen = cache_k.shape[2]
    future = torch.arange(seen)[None, :] > torch.arange(seen - new, seen)[:, None]
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    scores = torch.einsum("bgrtd,bgsd->bgrts", q.to(work), cache_k.to(work)) / math.sqrt(d)
    scores = scores + torch.zeros(new, seen, dtype=work).masked_fill(future, float("-inf"))
    weights = torch.exp(scores - scores.amax(-1, keepdim=True))
    weights = weights / weights.sum(-1, keepdim=True)
    heads = torch.einsum("bgrts,bgsd->btgrd", weights, cache_v.to(work)).reshape(batch, new, n_heads * d)
    return heads.to(x.dtype) @ W_o.T, cache_k, cache_v
