# quizprep: exercise=kv-cache
# style: Mistral-like decode step with a separate "prefill" branch for multi-token calls
# expect: fail diagnosis=kv-chunk-ignores-cache
# bug: any call with more than one token attends only within itself, even on a filled cache
import math

import torch


def append_kv(cache_k, cache_v, k, v):
    return torch.cat((cache_k, k), dim=2), torch.cat((cache_v, v), dim=2)


def _repeat_kv(hidden, n_rep):
    batch, kv_heads, length, head_dim = hidden.shape
    if n_rep == 1:
        return hidden
    hidden = hidden[:, :, None, :, :].expand(batch, kv_heads, n_rep, length, head_dim)
    return hidden.reshape(batch, kv_heads * n_rep, length, head_dim)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    bsz, q_len, _ = x.shape
    head_dim = W_q.shape[0] // n_heads
    kv_heads = W_k.shape[0] // head_dim
    q = (x @ W_q.T).view(bsz, q_len, n_heads, head_dim).transpose(1, 2)
    k = (x @ W_k.T).view(bsz, q_len, kv_heads, head_dim).transpose(1, 2)
    v = (x @ W_v.T).view(bsz, q_len, kv_heads, head_dim).transpose(1, 2)
    cache_k, cache_v = append_kv(cache_k, cache_v, k, v)
    if q_len > 1:  # prefill
        keys, values = k, v
        mask = torch.ones(q_len, q_len, dtype=torch.bool, device=x.device).tril()
    else:
        keys, values = cache_k, cache_v
        mask = None
    keys, values = _repeat_kv(keys, n_heads // kv_heads), _repeat_kv(values, n_heads // kv_heads)
    scores = q @ keys.transpose(2, 3) / math.sqrt(head_dim)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    probs = torch.softmax(scores.float(), dim=-1).to(q.dtype)
    out = (probs @ values).transpose(1, 2).reshape(bsz, q_len, n_heads * head_dim)
    return out @ W_o.T, cache_k, cache_v
