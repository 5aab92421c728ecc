# quizprep: exercise=kv-cache
# style: written with token-by-token generation in mind: explicit head loop, KV head chosen by integer division, no mask ("the newest token may see everything in the cache")
# expect: fail diagnosis=kv-prompt-not-causal
# bug: no causal mask at all: right for one new token, but the prompt's tokens (t > 1) see the tokens after them
import math

import torch


def append_kv(cache_k, cache_v, k, v):
    return torch.cat([cache_k, k], 2), torch.cat([cache_v, v], 2)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    B, t, _ = x.shape
    hd = W_q.shape[0] // n_heads
    kvh = W_k.shape[0] // hd
    group = n_heads // kvh

    q = (x @ W_q.t()).reshape(B, t, n_heads, hd).permute(0, 2, 1, 3)
    k_new = (x @ W_k.t()).reshape(B, t, kvh, hd).permute(0, 2, 1, 3)
    v_new = (x @ W_v.t()).reshape(B, t, kvh, hd).permute(0, 2, 1, 3)
    cache_k, cache_v = append_kv(cache_k, cache_v, k_new, v_new)

    heads = []
    for h in range(n_heads):
        g = h // group
        s = q[:, h] @ cache_k[:, g].transpose(-1, -2) / math.sqrt(hd)
        s = s - s.max(dim=-1, keepdim=True).values
        w = s.exp()
        w = w / w.sum(dim=-1, keepdim=True)
        heads.append(w @ cache_v[:, g])
    out = torch.stack(heads, dim=2).reshape(B, t, n_heads * hd)
    return out @ W_o.t(), cache_k, cache_v
