# quizprep: exercise=kv-cache
# style: Hugging Face DynamicCache-like update, concatenating on the wrong axis
# expect: fail diagnosis=cat-wrong-axis
# bug: torch.cat on dim=1 (the KV heads) instead of the sequence axis
import math

import torch


def append_kv(cache_k, cache_v, k, v):
    return torch.cat([cache_k, k], dim=1), torch.cat([cache_v, v], dim=1)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    bsz, q_len, _ = x.shape
    head_dim = W_q.shape[0] // n_heads
    kv_heads = W_k.shape[0] // head_dim
    past = cache_k.shape[-2]
    q = (x @ W_q.T).view(bsz, q_len, n_heads, head_dim).transpose(1, 2)
    k = (x @ W_k.T).view(bsz, q_len, kv_heads, head_dim).transpose(1, 2)
    v = (x @ W_v.T).view(bsz, q_len, kv_heads, head_dim).transpose(1, 2)
    cache_k, cache_v = append_kv(cache_k, cache_v, k, v)
    keys = cache_k.repeat_interleave(n_heads // kv_heads, dim=1)
    values = cache_v.repeat_interleave(n_heads // kv_heads, dim=1)
    scores = q @ keys.transpose(-1, -2) / math.sqrt(head_dim)
    visible = torch.ones(q_len, past + q_len, dtype=torch.bool, device=x.device).tril(past)
    scores = scores.masked_fill(~visible, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ values
    return out.transpose(1, 2).reshape(bsz, q_len, -1) @ W_o.T, cache_k, cache_v
