# quizprep: exercise=kv-cache
# expect: check=chunks-on-cache diagnosis=kv-prepended
# The new keys and values are concatenated in front of the cache.
from __future__ import annotations

import math

import torch


def append_kv(cache_k, cache_v, k, v):
    return torch.cat([k, cache_k], dim=-2), torch.cat([v, cache_v], dim=-2)  # BUG


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    B, t, _ = x.shape
    d = W_q.shape[0] // n_heads
    G = W_k.shape[0] // d
    q = (x @ W_q.T).view(B, t, n_heads, d).transpose(1, 2)
    k = (x @ W_k.T).view(B, t, G, d).transpose(1, 2)
    v = (x @ W_v.T).view(B, t, G, d).transpose(1, 2)
    cache_k, cache_v = append_kv(cache_k, cache_v, k, v)
    total = cache_k.shape[-2]
    keys = cache_k.repeat_interleave(n_heads // G, dim=1)
    values = cache_v.repeat_interleave(n_heads // G, dim=1)
    scores = q @ keys.transpose(-2, -1) / math.sqrt(d)
    keep = torch.ones(t, total, dtype=torch.bool, device=x.device).tril(total - t)
    scores = scores.masked_fill(~keep, float("-inf"))
    out = (torch.softmax(scores, dim=-1) @ values).transpose(1, 2).reshape(B, t, n_heads * d)
    return out @ W_o.T, cache_k, cache_v
