# quizprep: exercise=kv-cache
# source: Lightning-AI/litgpt's CausalSelfAttention (q, k, v split per query group, the cache updated and read back) with the cache growing by torch.cat as in earlier lit-llama
# style: fused-free projections with F.linear, view + transpose, repeat_interleave of K/V to the query heads after caching, additive causal mask from torch.ones(...).tril(diagonal=T)
# expect: fail diagnosis=kv-prepended
# bug: the new keys and values are concatenated in front of the cache (torch.cat((k, cache_k), dim=2)) instead of after it: the positions are out of order, so the causal mask lets each new token see the wrong keys, and the returned cache is in the wrong order
import math

import torch
import torch.nn.functional as F


def append_kv(cache_k, cache_v, k, v):
    return torch.cat((k, cache_k), dim=2), torch.cat((v, cache_v), dim=2)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    B, t, _ = x.shape
    head_size = W_q.shape[0] // n_heads
    n_query_groups = W_k.shape[0] // head_size
    q = F.linear(x, W_q).view(B, t, n_heads, head_size).transpose(1, 2)
    k = F.linear(x, W_k).view(B, t, n_query_groups, head_size).transpose(1, 2)
    v = F.linear(x, W_v).view(B, t, n_query_groups, head_size).transpose(1, 2)
    cache_k, cache_v = append_kv(cache_k, cache_v, k, v)
    T = cache_k.shape[2] - t
    q_per_kv = n_heads // n_query_groups
    k_all = cache_k.repeat_interleave(q_per_kv, dim=1)
    v_all = cache_v.repeat_interleave(q_per_kv, dim=1)
    att = (q @ k_all.transpose(-2, -1)) * (1.0 / math.sqrt(head_size))
    keep = torch.ones(t, T + t, dtype=torch.bool, device=x.device).tril(diagonal=T)
    att = att.masked_fill(~keep, float("-inf"))
    y = torch.softmax(att, dim=-1) @ v_all
    y = y.transpose(1, 2).reshape(B, t, n_heads * head_size)
    return F.linear(y, W_o), cache_k, cache_v
