# quizprep: exercise=budget
# source: the parameter count of public transformer calculators (e.g. EleutherAI's cookbook calc/calc_transformer_params.py: attention = 4 * d_model**2 + 4 * d_model, written for multi-head attention), carried over to grouped-query attention with the weights' K/V width fixed but the biases left at 4 * d_model
# style: closed forms per function, a dtype table from torch's own bit widths
# expect: fail diagnosis=params-bias-full-width
# bug: with bias=True and n_kv_heads < n_heads the K and V biases are counted d_model wide, not n_kv_heads · d_head wide: 2 · (d_model − n_kv_heads · d_head) parameters too many
import torch


def dtype_bytes(dtype):
    kind = getattr(torch, dtype)
    info = torch.finfo(kind) if kind.is_floating_point else torch.iinfo(kind)
    return info.bits // 8


def attention_scores_bytes(batch, heads, n, m, dtype):
    return batch * heads * n * m * dtype_bytes(dtype)


def kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, dtype):
    return 2 * layers * kv_heads * head_dim * seq_len * batch * dtype_bytes(dtype)


def attention_params(d_model, n_heads, n_kv_heads, bias):
    d_head = d_model // n_heads
    weights = 2 * d_model * n_heads * d_head + 2 * d_model * n_kv_heads * d_head
    return weights + (4 * d_model if bias else 0)


def attention_flops(batch, heads, n, m, head_dim, causal):
    if not causal:
        return 4 * batch * heads * n * m * head_dim
    offset = m - n
    pairs = sum(min(m, offset + i + 1) for i in range(n)) if offset >= 0 else sum(max(0, offset + i + 1) for i in range(n))
    return 4 * batch * heads * pairs * head_dim
