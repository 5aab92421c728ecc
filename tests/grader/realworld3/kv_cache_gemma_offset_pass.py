# quizprep: exercise=kv-cache
# style: Gemma-like step: positions from the cache length, an additive mask built with finfo.min
# expect: pass
import math

import torch


def append_kv(cache_k, cache_v, k, v):
    return torch.cat([cache_k, k], dim=-2), torch.cat([cache_v, v], dim=-2)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    batch, new, _ = x.shape
    head_dim = W_q.shape[0] // n_heads
    groups = W_k.shape[0] // head_dim
    past = cache_k.shape[2]
    xq = (x @ W_q.T).reshape(batch, new, n_heads, head_dim).permute(0, 2, 1, 3)
    xk = (x @ W_k.T).reshape(batch, new, groups, head_dim).permute(0, 2, 1, 3)
    xv = (x @ W_v.T).reshape(batch, new, groups, head_dim).permute(0, 2, 1, 3)
    cache_k, cache_v = append_kv(cache_k, cache_v, xk, xv)
    keys = cache_k.repeat_interleave(n_heads // groups, dim=1)
    values = cache_v.repeat_interleave(n_heads // groups, dim=1)
    query_pos = torch.arange(past, past + new, device=x.device)
    key_pos = torch.arange(past + new, device=x.device)
    scores = (xq.float() @ keys.float().transpose(-1, -2)) * head_dim ** -0.5
    bias = torch.zeros(new, past + new, device=x.device)
    bias = bias.masked_fill(key_pos[None, :] > query_pos[:, None], torch.finfo(torch.float32).min)
    probs = torch.softmax(scores + bias, dim=-1)
    out = (probs @ values.float()).to(x.dtype)
    out = out.permute(0, 2, 1, 3).reshape(batch, new, n_heads * head_dim)
    return out @ W_o.T, cache_k, cache_v
