# quizprep: exercise=kv-cache
# style: Llama-like: repeat_kv via expand + reshape, matmul, a boolean tril mask over (t, T + t), F.softmax
# expect: fail diagnosis=kv-mask-no-offset
# bug: torch.tril(ones(t, T + t)) without diagonal=T: correct for the prompt (T = 0), but afterwards the new tokens only see the first cached positions
import math

import torch
import torch.nn.functional as F


def append_kv(cache_k, cache_v, k, v):
    cache_k = torch.cat([cache_k, k], dim=-2)
    cache_v = torch.cat([cache_v, v], dim=-2)
    return cache_k, cache_v


def repeat_kv(hidden: torch.Tensor, n_rep: int) -> torch.Tensor:
    b, g, s, d = hidden.shape
    if n_rep == 1:
        return hidden
    return hidden[:, :, None, :, :].expand(b, g, n_rep, s, d).reshape(b, g * n_rep, s, d)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    bsz, q_len, _ = x.shape
    head_dim = W_q.shape[0] // n_heads
    n_kv = W_k.shape[0] // head_dim

    query = F.linear(x, W_q).view(bsz, q_len, n_heads, head_dim).transpose(1, 2)
    key = F.linear(x, W_k).view(bsz, q_len, n_kv, head_dim).transpose(1, 2)
    value = F.linear(x, W_v).view(bsz, q_len, n_kv, head_dim).transpose(1, 2)
    cache_k, cache_v = append_kv(cache_k, cache_v, key, value)

    keys = repeat_kv(cache_k, n_heads // n_kv)
    values = repeat_kv(cache_v, n_heads // n_kv)
    kv_len = keys.shape[-2]

    attn = torch.matmul(query, keys.transpose(2, 3)) / math.sqrt(head_dim)
    causal = torch.tril(torch.ones(q_len, kv_len, dtype=torch.bool, device=x.device))
    attn = attn.masked_fill(~causal, float("-inf"))
    attn = F.softmax(attn, dim=-1)
    out = torch.matmul(attn, values)
    out = out.transpose(1, 2).reshape(bsz, q_len, n_heads * head_dim)
    return F.linear(out, W_o), cache_k, cache_v
