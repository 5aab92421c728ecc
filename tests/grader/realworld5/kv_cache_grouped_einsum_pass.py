# quizprep: exercise=kv-cache
# style: queries viewed as (B, G, H/G, t, d) so the grouped heads read the cached KV heads by broadcasting (no repeat_kv), einsum for both products, the causal offset from arange positions
# expect: pass
import math

import torch


def append_kv(cache_k, cache_v, k, v):
    return torch.cat((cache_k, k), dim=2), torch.cat((cache_v, v), dim=2)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    B, t, _ = x.shape
    d_head = W_q.shape[0] // n_heads
    G = W_k.shape[0] // d_head
    rep = n_heads // G
    past = cache_k.shape[2]

    q = (x @ W_q.T).view(B, t, G, rep, d_head).permute(0, 2, 3, 1, 4)  # (B, G, rep, t, d)
    k = (x @ W_k.T).view(B, t, G, d_head).transpose(1, 2)
    v = (x @ W_v.T).view(B, t, G, d_head).transpose(1, 2)
    cache_k, cache_v = append_kv(cache_k, cache_v, k.to(x.dtype), v.to(x.dtype))

    scores = torch.einsum("bgrqd,bgkd->bgrqk", q, cache_k) / math.sqrt(d_head)
    q_pos = torch.arange(past, past + t, device=x.device)
    k_pos = torch.arange(past + t, device=x.device)
    scores = scores.masked_fill(k_pos[None, :] > q_pos[:, None], float("-inf"))
    weights = torch.softmax(scores.to(torch.promote_types(x.dtype, torch.float32)), dim=-1).to(x.dtype)
    ctx = torch.einsum("bgrqk,bgkd->bgrqd", weights, cache_v)
    ctx = ctx.permute(0, 3, 1, 2, 4).reshape(B, t, n_heads * d_head)
    return ctx @ W_o.T, cache_k, cache_v
