# quizprep: exercise=kv-cache
# source: pytorch/torchtune torchtune/modules/kv_cache.py (KVCache.update) and torchtune/modules/attention.py (MultiHeadAttention: q per kv head expanded with expand + flatten), adapted from a preallocated buffer to the exercise's growing tensors
# style: the new positions written after the cached ones into a fresh buffer with slice assignment (the update's k_out[:, :, pos] = k_val), K/V expanded with expand(b, n_kv, q_per_kv, s, h).flatten(1, 2), a boolean causal mask over absolute positions
# expect: pass
import torch
import torch.nn.functional as F


def append_kv(cache_k, cache_v, k, v):
    B, G, T, D = cache_k.shape
    t = k.shape[2]
    k_out = cache_k.new_empty(B, G, T + t, D)
    v_out = cache_v.new_empty(B, G, T + t, v.shape[-1])
    k_out[:, :, :T], v_out[:, :, :T] = cache_k, cache_v
    k_out[:, :, T:], v_out[:, :, T:] = k, v
    return k_out, v_out


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    b, s, _ = x.shape
    head_dim = W_q.shape[0] // n_heads
    num_kv_heads = W_k.shape[0] // head_dim
    q = F.linear(x, W_q).view(b, s, n_heads, head_dim).transpose(1, 2)
    k = F.linear(x, W_k).view(b, s, num_kv_heads, head_dim).transpose(1, 2)
    v = F.linear(x, W_v).view(b, s, num_kv_heads, head_dim).transpose(1, 2)
    T = cache_k.shape[2]
    cache_k, cache_v = append_kv(cache_k, cache_v, k, v)
    q_per_kv = n_heads // num_kv_heads
    total = T + s
    k_e = cache_k.unsqueeze(2).expand(b, num_kv_heads, q_per_kv, total, head_dim).flatten(1, 2)
    v_e = cache_v.unsqueeze(2).expand(b, num_kv_heads, q_per_kv, total, head_dim).flatten(1, 2)
    input_pos = torch.arange(T, T + s, device=x.device)
    allowed = torch.arange(total, device=x.device)[None, :] <= input_pos[:, None]
    scores = (q @ k_e.transpose(-2, -1)) / head_dim ** 0.5
    scores = scores.masked_fill(~allowed, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v_e
    return F.linear(out.transpose(1, 2).reshape(b, s, -1), W_o), cache_k, cache_v
