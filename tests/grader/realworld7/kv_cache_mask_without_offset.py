# quizprep: exercise=kv-cache
# source: Meta's llama (model.py, Attention.forward with start_pos) before its fix for the cached mask: the causal mask built as torch.triu(full((seqlen, seqlen), -inf), diagonal=1) without the start_pos columns of the cache
# style: scores against cache + new keys, additive float mask, repeat_kv via expand + reshape, softmax in float32
# expect: fail diagnosis=kv-mask-no-offset
# bug: the mask is (t, t), built without the cache offset: it should be (t, T + t), zeros over the T cached columns and triu(-inf, diagonal=T + 1). On the first call (T = 0) it is right; with a cache and t > 1 the (t, t) mask does not broadcast against (t, T + t) scores
import math

import torch


def append_kv(cache_k, cache_v, k, v):
    return torch.cat([cache_k, k], dim=2), torch.cat([cache_v, v], dim=2)


def repeat_kv(x, n_rep):
    bs, n_kv_heads, slen, head_dim = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(bs, n_kv_heads, n_rep, slen, head_dim).reshape(bs, n_kv_heads * n_rep, slen, head_dim)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    bsz, seqlen, _ = x.shape
    head_dim = W_q.shape[0] // n_heads
    n_kv_heads = W_k.shape[0] // head_dim
    xq = (x @ W_q.T).view(bsz, seqlen, n_heads, head_dim).transpose(1, 2)
    xk = (x @ W_k.T).view(bsz, seqlen, n_kv_heads, head_dim).transpose(1, 2)
    xv = (x @ W_v.T).view(bsz, seqlen, n_kv_heads, head_dim).transpose(1, 2)
    cache_k, cache_v = append_kv(cache_k, cache_v, xk, xv)
    keys = repeat_kv(cache_k, n_heads // n_kv_heads)
    values = repeat_kv(cache_v, n_heads // n_kv_heads)
    scores = xq @ keys.transpose(2, 3) / math.sqrt(head_dim)
    if seqlen > 1:
        mask = torch.full((seqlen, seqlen), float("-inf"), device=x.device, dtype=scores.dtype)
        mask = torch.triu(mask, diagonal=1)
        scores = scores + mask
    scores = torch.softmax(scores.float(), dim=-1).type_as(xq)
    output = (scores @ values).transpose(1, 2).reshape(bsz, seqlen, -1)
    return output @ W_o.T, cache_k, cache_v
