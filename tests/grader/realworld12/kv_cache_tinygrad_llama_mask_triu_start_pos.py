# quizprep: exercise=kv-cache
# source: a one-line slip on tinygrad/tinygrad extra/models/llama.py and tinygrad/tensor.py @ ad4472e6e842eef64b33988f2faf6ddedf1f21b5 (Attention.__call__(x, start_pos, freqs_cis, mask): wq/wk/wv, reshape to (bsz, seqlen, heads, head_dim), keys = cache_k.shrink((None, (0, start_pos), None, None)).cat(xk, dim=1) (the cache sliced to the first start_pos positions and the new ones concatenated), the cache reassigned padded to max_context, repeat_kv by x.repeat((1, 1, 1, n_rep)).reshape(...), transpose(1, 2), Tensor.scaled_dot_product_attention(keys, values, mask), wo; Transformer.forward builds mask = Tensor.full((1, 1, seqlen, start_pos+seqlen), -inf).triu(start_pos+1) if seqlen > 1 else None)
# style: tinygrad's LLaMA: (B, S, heads, d) layout with the cache concatenated on the sequence axis, GQA by tiling the LAST axis n_rep times and reshaping (equal to repeat_interleave on heads), an additive -inf mask shaped (seqlen, start_pos + seqlen) and shifted with triu(start_pos + 1), no mask at all for a single decoded token
# adapter: the contract's (B, G, T, d) cache transposed to tinygrad's (B, T, G, d) around the concatenation (append_kv is the shrink + cat line on the contract's layout; the growing cache is returned instead of assigned into a max_context buffer); wq/wk/wv/wo are x @ W.T with the contract's weights; no RoPE (freqs_cis), no x.half() (the cache stays in x's dtype as the contract asks); start_pos = the cache's length; Transformer.forward's mask built inside decode_step; Tensor.scaled_dot_product_attention and Tensor.softmax as torch ops (max with keepdim, exp, divide by the sum)
# bug: slip of ours: the mask is .triu(start_pos) instead of .triu(start_pos+1): the -inf band starts on the diagonal, so in a multi-token call every new token is hidden from itself (the first prompt token sees no key at all); single-token decode steps have no mask and are unaffected
# expect: fail diagnosis=kv-no-diagonal
from __future__ import annotations

import math

import torch


def scaled_dot_product_attention(self, key, value, attn_mask=None):
    # Tensor.scaled_dot_product_attention (dropout_p = 0, is_causal = False)
    qk = self @ key.transpose(-2, -1) / math.sqrt(self.shape[-1])
    qk = (qk + attn_mask) if attn_mask is not None else qk
    m = qk - qk.amax(dim=-1, keepdim=True)
    e = m.exp()
    return e.div(e.sum(dim=-1, keepdim=True)) @ value


def repeat_kv(x, n_rep: int):
    bs, seqlen, n_kv_heads, head_dim = x.shape
    if n_rep == 1: return x
    # NOTE: this is different from x.repeat((1, 1, n_rep, 1))
    return x.repeat((1, 1, 1, n_rep)).reshape(bs, seqlen, n_kv_heads * n_rep, head_dim)


def append_kv(cache_k, cache_v, k, v):
    # keys = self.cache_k.shrink((None, (0, start_pos), None, None)).cat(xk, dim=1)
    keys = torch.cat([cache_k, k], dim=2)
    values = torch.cat([cache_v, v], dim=2)
    return keys, values


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    n_heads = n_heads
    head_dim = W_q.shape[0] // n_heads
    n_kv_heads = W_k.shape[0] // head_dim
    n_rep = n_heads // n_kv_heads
    start_pos = cache_k.shape[2]

    xq, xk, xv = x @ W_q.T, x @ W_k.T, x @ W_v.T
    xq = xq.reshape(xq.shape[0], xq.shape[1], n_heads, head_dim)
    xk = xk.reshape(xk.shape[0], xk.shape[1], n_kv_heads, head_dim)
    xv = xv.reshape(xv.shape[0], xv.shape[1], n_kv_heads, head_dim)
    bsz, seqlen, _, _ = xq.shape

    # Transformer.forward
    mask = torch.full((1, 1, seqlen, start_pos+seqlen), float("-inf"), dtype=x.dtype, device=x.device).triu(start_pos) if seqlen > 1 else None

    new_k, new_v = append_kv(cache_k, cache_v, xk.transpose(1, 2), xv.transpose(1, 2))
    keys, values = new_k.transpose(1, 2), new_v.transpose(1, 2)

    keys, values = repeat_kv(keys, n_rep), repeat_kv(values, n_rep)

    xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
    attn = scaled_dot_product_attention(xq, keys, values, mask).transpose(1, 2).reshape(bsz, seqlen, -1)
    return attn @ W_o.T, new_k, new_v
