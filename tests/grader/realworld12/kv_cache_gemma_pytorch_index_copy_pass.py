# quizprep: exercise=kv-cache
# source: google/gemma_pytorch gemma/model.py @ 014acb7ac4563a5f77c76d7ff98f31b568c16508 (GemmaAttention.forward: k_cache.index_copy_(1, kv_write_indices, xk) and the same for v into a (B, max_seq_len, kv_heads, head_dim) cache, attention over the whole cache with repeat_interleave(key, num_queries_per_kv, dim=2), q.mul_(scaling), scores + mask, F.softmax(scores.float()).type_as(q); GemmaForCausalLM.generate: mask_tensor = triu(full((1, 1, max_seq_len, max_seq_len), -2.3819763e38), diagonal=1), curr_mask_tensor = mask_tensor.index_select(2, input_positions_tensor), positions advancing by one per decoded token)
# style: Google's inference Gemma: the cache written in place by index_copy_ at explicit write indices (the positions), the causal mask one precomputed square of additive -2.3819763e38 whose rows are picked by position with index_select, K/V heads expanded with repeat_interleave, the softmax in float32
# adapter: the contract's cache grows instead of being preallocated: append_kv allocates (B, G, T + t, d), copies the T cached positions in and index_copy_'s the new ones at kv_write_indices = T .. T + t - 1 (on the contract's head-major axis 2; the caller's cache is not written); decode_step transposes the grown cache to Gemma's (B, S, G, d) and follows GemmaAttention.forward with max_seq_len = T + t, input_positions = T .. T + t - 1, the mask rows index_select'ed as generate() does; qkv_proj is x @ W.T with the contract's W_q, W_k, W_v (three matmuls instead of one fused split) and o_proj x @ W_o.T; no RoPE, QK norm, soft-capping or sliding window
# expect: pass
from __future__ import annotations

import torch
import torch.nn.functional as F


def append_kv(cache_k, cache_v, k, v):
    batch_size, num_kv_heads, T, head_dim = cache_k.shape
    t = k.shape[2]
    kv_write_indices = torch.arange(T, T + t, device=k.device)
    k_cache = torch.zeros(batch_size, num_kv_heads, T + t, head_dim, dtype=k.dtype, device=k.device)
    v_cache = torch.zeros(batch_size, num_kv_heads, T + t, head_dim, dtype=v.dtype, device=v.device)
    k_cache[:, :, :T] = cache_k
    v_cache[:, :, :T] = cache_v
    k_cache.index_copy_(2, kv_write_indices, k)
    v_cache.index_copy_(2, kv_write_indices, v)
    return k_cache, v_cache


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    num_heads = n_heads
    head_dim = W_q.shape[0] // num_heads
    num_kv_heads = W_k.shape[0] // head_dim
    num_queries_per_kv = num_heads // num_kv_heads
    scaling = head_dim**-0.5

    batch_size, input_len, _ = x.shape
    T = cache_k.shape[2]
    max_seq_len = T + input_len

    # GemmaForCausalLM.generate
    input_positions_tensor = torch.arange(T, T + input_len, dtype=torch.int64, device=x.device)
    mask_tensor = torch.full((1, 1, max_seq_len, max_seq_len), -2.3819763e38).to(torch.float)
    mask_tensor = torch.triu(mask_tensor, diagonal=1).to(x.device)
    mask = mask_tensor.index_select(2, input_positions_tensor)

    # GemmaAttention.forward
    xq, xk, xv = x @ W_q.T, x @ W_k.T, x @ W_v.T

    xq = xq.view(batch_size, -1, num_heads, head_dim)
    xk = xk.view(batch_size, -1, num_kv_heads, head_dim)
    xv = xv.view(batch_size, -1, num_kv_heads, head_dim)

    # Write new kv cache.
    new_k, new_v = append_kv(cache_k, cache_v, xk.transpose(1, 2), xv.transpose(1, 2))
    # [batch_size, max_seq_len, n_local_kv_heads, head_dim]
    k_cache, v_cache = new_k.transpose(1, 2), new_v.transpose(1, 2)

    key = k_cache
    value = v_cache
    if num_kv_heads != num_heads:
        # [batch_size, max_seq_len, n_local_heads, head_dim]
        key = torch.repeat_interleave(key, num_queries_per_kv, dim=2)
        value = torch.repeat_interleave(value, num_queries_per_kv, dim=2)

    # [batch_size, n_local_heads, input_len, head_dim]
    q = xq.transpose(1, 2)
    # [batch_size, n_local_heads, max_seq_len, head_dim]
    k = key.transpose(1, 2)
    v = value.transpose(1, 2)

    # [batch_size, n_local_heads, input_len, max_seq_len]
    q.mul_(scaling)
    scores = torch.matmul(q, k.transpose(2, 3))
    scores = scores + mask
    scores = F.softmax(scores.float(), dim=-1).type_as(q)

    # [batch_size, n_local_heads, input_len, head_dim]
    output = torch.matmul(scores, v)

    # [batch_size, input_len, hidden_dim]
    output = (output.transpose(1, 2).contiguous().view(batch_size, input_len, -1))
    output = output @ W_o.T
    return output, new_k, new_v
