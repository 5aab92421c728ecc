# quizprep: exercise=kv-cache
# source: a one-line slip on likejazz/llama3.np llama3.py @ 30a73d28f0f11e056e20998341d50b55b303d2af (Attention.__call__: cache_k[:B, start_pos: start_pos + L] = xk; ks = cache_k[:B, : start_pos + L]; repeat_kv = np.repeat(x, n_rep, axis=2); attention = xq @ xk.transpose(0, 1, 3, 2) / math.sqrt(head_dim); Llama.__call__'s mask: np.triu(np.full((L, L), -inf), k=1) after np.zeros((L, start_pos)); softmax(x) = exp(x - max) / sum)
# style: a NumPy Llama ported op for op: the (B, T, KV heads, d) cache layout, GQA by repeating along the heads axis of that layout, an additive -inf mask with zero columns for the cached prefix, a hand-written softmax, the mask only built when more than one token comes in
# adapter: np.* rewritten as torch.* (np.repeat → repeat_interleave, transpose(0, 1, 3, 2) → permute); the preallocated cache_k[:B, start_pos:...] write becomes torch.cat on the contract's (B, G, T, d) cache (transposed to llama3.np's (B, T, G, d) to read it); weights given as tensors (x @ W.T where llama3.np stores W.T); RoPE left out; the mask in x's dtype
# expect: fail diagnosis=gqa-repeat
# bug: a slip of ours: np.repeat(x, n_rep, axis=2) ported as torch's Tensor.repeat, which tiles the KV heads (0, 1, 0, 1) instead of repeating each one (0, 0, 1, 1), so query head h reads KV head h mod G
from __future__ import annotations

import math

import torch


def softmax(x):
    exp_x = torch.exp(x - torch.amax(x, dim=-1, keepdim=True))
    return exp_x / torch.sum(exp_x, dim=-1, keepdim=True)


def repeat_kv(x: torch.Tensor, n_rep: int):
    if n_rep == 1:
        return x
    z = x.repeat(1, 1, n_rep, 1)
    return z


def append_kv(cache_k, cache_v, k, v):
    return torch.cat([cache_k, k], dim=2), torch.cat([cache_v, v], dim=2)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    B, L, _ = x.shape
    head_dim = W_q.shape[0] // n_heads
    n_local_kv_heads = W_k.shape[0] // head_dim
    n_rep = n_heads // n_local_kv_heads
    start_pos = cache_k.shape[2]

    xq = x @ W_q.T
    xk = x @ W_k.T
    xv = x @ W_v.T

    xq = xq.reshape(B, L, n_heads, head_dim)
    xk = xk.reshape(B, L, n_local_kv_heads, head_dim)
    xv = xv.reshape(B, L, n_local_kv_heads, head_dim)

    # KV Cache
    cache_k, cache_v = append_kv(cache_k, cache_v, xk.transpose(1, 2), xv.transpose(1, 2))
    ks = cache_k.transpose(1, 2)
    vs = cache_v.transpose(1, 2)

    # GQA
    xk = repeat_kv(ks, n_rep)
    xv = repeat_kv(vs, n_rep)

    xq = xq.permute(0, 2, 1, 3)
    xk = xk.permute(0, 2, 1, 3)
    xv = xv.permute(0, 2, 1, 3)

    mask = None
    if L > 1:
        mask = torch.full((L, L), float("-inf"), dtype=x.dtype, device=x.device)
        mask = torch.triu(mask, diagonal=1)
        mask = torch.cat([torch.zeros((L, start_pos), dtype=x.dtype, device=x.device), mask], dim=1)

    attention = xq @ xk.permute(0, 1, 3, 2) / math.sqrt(head_dim)
    if mask is not None:
        attention = attention + mask[None, None, :, :]
    attention = softmax(attention)
    output = attention @ xv

    output = output.permute(0, 2, 1, 3).reshape(B, L, -1)
    output = output @ W_o.T
    return output, cache_k, cache_v
