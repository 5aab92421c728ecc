# quizprep: exercise=kv-cache
# source: a one-line slip on allenai/OLMo olmo/model.py (OLMoBlock.attention: k = torch.cat((past_key, k), dim=-2); attention_bias[:, :, key_len - query_len : key_len, :key_len]; get_causal_attention_bias: triu(ones, diagonal=1) filled with finfo.min; _scaled_dot_product_attention: k.repeat_interleave(num_q_heads // num_kv_heads, dim=1))
# style: one causal bias for the longest sequence, sliced by the cache offset, added to the scores; K/V grown with cat on the sequence axis
# adapter: nn.Linear weights given as tensors (x @ W.T), the bias built per call for T + t positions, F.scaled_dot_product_attention (off limits) written out as scores + bias, softmax, @ v
# expect: fail diagnosis=kv-mask-no-offset
# bug: the shared causal bias is sliced from its first row, attention_bias[:, :, :query_len, :key_len], not at the cache offset key_len − query_len: new token i on a filled cache sees keys 0..i only, as if the cache were empty
import math

import torch


def append_kv(cache_k, cache_v, k, v):
    return torch.cat((cache_k, k), dim=-2), torch.cat((cache_v, v), dim=-2)


def get_causal_attention_bias(seq_len, device, dtype):
    causal_bias = torch.triu(torch.ones(seq_len, seq_len, device=device, dtype=dtype), diagonal=1)
    causal_bias.masked_fill_(causal_bias == 1, torch.finfo(dtype).min)
    return causal_bias.view(1, 1, seq_len, seq_len)


def decode_step(x, cache_k, cache_v, W_q, W_k, W_v, W_o, n_heads):
    B, T, _ = x.shape
    head_dim = W_q.shape[0] // n_heads
    n_kv_heads = W_k.shape[0] // head_dim
    q = (x @ W_q.T).view(B, T, n_heads, head_dim).transpose(1, 2)
    k = (x @ W_k.T).view(B, T, n_kv_heads, head_dim).transpose(1, 2)
    v = (x @ W_v.T).view(B, T, n_kv_heads, head_dim).transpose(1, 2)
    k, v = append_kv(cache_k, cache_v, k, v)
    present = (k, v)
    query_len, key_len = q.shape[-2], k.shape[-2]
    attention_bias = get_causal_attention_bias(key_len, x.device, q.dtype)
    attention_bias = attention_bias[:, :, :query_len, :key_len]
    if n_kv_heads != n_heads:
        k = k.repeat_interleave(n_heads // n_kv_heads, dim=1, output_size=n_heads)
        v = v.repeat_interleave(n_heads // n_kv_heads, dim=1, output_size=n_heads)
    att = q @ k.transpose(-2, -1) / math.sqrt(head_dim) + attention_bias
    att = torch.softmax(att, dim=-1)
    y = (att @ v).transpose(1, 2).contiguous().view(B, T, n_heads * head_dim)
    return y @ W_o.T, present[0], present[1]
