# quizprep: exercise=budget
# style: sizes from torch (element_size of an empty tensor), the causal count as the closed-form triangle, one-line returns
# expect: fail diagnosis=causal-top-left
# bug: the causal pair count is n(n + 1)/2 whatever m is: with a KV cache (m > n) every query also sees the m − n cached keys
import torch


def _size(dtype: str) -> int:
    return torch.empty((), dtype=getattr(torch, dtype)).element_size()


def attention_scores_bytes(batch, heads, n, m, dtype):
    return batch * heads * n * m * _size(dtype)


def kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, dtype):
    return 2 * layers * kv_heads * head_dim * seq_len * batch * _size(dtype)


def attention_params(d_model, n_heads, n_kv_heads, bias):
    d_head = d_model // n_heads
    q, kv = n_heads * d_head, n_kv_heads * d_head
    return (d_model + bias) * (q + 2 * kv) + (q + bias) * d_model


def attention_flops(batch, heads, n, m, head_dim, causal):
    pairs = n * (n + 1) // 2 if causal else n * m
    return 4 * batch * heads * pairs * head_dim
