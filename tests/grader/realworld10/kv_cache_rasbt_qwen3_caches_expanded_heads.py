# quizprep: exercise=kv-cache
# source: rasbt/LLMs-from-scratch pkg/llms_from_scratch/kv_cache/qwen3.py @ 0a2e8c39c45c41b0d1c8d48eea411817006964ab (GroupedQueryAttention.forward: keys_new = keys_new.repeat_interleave(self.group_size, dim=1) before "if use_cache:", cache_k = torch.zeros(b, self.num_heads, max_seq_len, head_dim); causal_mask = torch.triu(ones((T_q, T_k), dtype=bool), diagonal=1) only when T_q > 1; softmax(attn_scores / head_dim**0.5))
# style: a from-scratch GQA module with an in-module cache: K and V expanded to all query heads first, then cached; the causal mask a boolean triu filled with -inf, skipped for one-token steps; the scale applied to the masked scores
# adapter: the module's W_query/W_key/W_value/out_proj given as tensors (x @ W.T); the preallocated cache written with copy_ at self.ptr becomes the contract's append_kv (torch.cat on the sequence axis), and an empty cache is re-made with num_heads heads as the source allocates it on first use (torch.zeros(b, self.num_heads, ...)); qk_norm and RoPE left out; window_size = None (the whole cache); the causal mask's diagonal moved by the cache length (1 + T_k − T_q), since the source calls with several tokens only on an empty cache (corrected after the first grading)
# expect: fail diagnosis=kv-cache-expanded
# bug: as published: the cache is filled after repeat_interleave, so it holds the H expanded heads instead of the G KV heads and costs H / G times the 2 · G · d_head bytes per token that GQA exists to save (the attention values themselves are right)
from __future__ import annotations

import torch


def append_kv(cache_k, cache_v, k, v):
    return torch.cat([cache_k, k], dim=2), torch.cat([cache_v, v], dim=2)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    b, num_tokens, _ = x.shape
    head_dim = W_q.shape[0] // n_heads
    num_kv_groups = W_k.shape[0] // head_dim
    group_size = n_heads // num_kv_groups
    d_out = n_heads * head_dim

    queries = x @ W_q.T
    keys_new = x @ W_k.T
    values_new = x @ W_v.T

    queries = queries.view(b, num_tokens, n_heads, head_dim).transpose(1, 2)
    keys_new = keys_new.view(b, num_tokens, num_kv_groups, head_dim).transpose(1, 2)
    values_new = values_new.view(b, num_tokens, num_kv_groups, head_dim).transpose(1, 2)

    # Expand K and V to match number of heads
    keys_new = keys_new.repeat_interleave(group_size, dim=1)
    values_new = values_new.repeat_interleave(group_size, dim=1)

    if cache_k.shape[2] == 0:
        cache_k = cache_k.new_zeros(b, n_heads, 0, head_dim)
        cache_v = cache_v.new_zeros(b, n_heads, 0, head_dim)
    cache_k, cache_v = append_kv(cache_k, cache_v, keys_new, values_new)
    keys, values = cache_k, cache_v

    attn_scores = queries @ keys.transpose(2, 3)

    T_q = queries.shape[-2]
    T_k = keys.shape[-2]

    if T_q > 1:
        causal_mask = torch.triu(
            torch.ones((T_q, T_k), device=x.device, dtype=torch.bool),
            diagonal=1 + T_k - T_q  # adapter: the source calls with several tokens only on an empty cache
        )
        attn_scores = attn_scores.masked_fill(causal_mask, -torch.inf)

    attn_weights = torch.softmax(attn_scores / head_dim**0.5, dim=-1)

    context = (attn_weights @ values).transpose(1, 2).reshape(b, num_tokens, d_out)
    return context @ W_o.T, cache_k, cache_v
