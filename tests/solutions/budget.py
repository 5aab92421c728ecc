# quizprep: exercise=budget
"""Example solution of exercises/budget.py, written as a learner would (no quizprep imports)."""

BYTES = {
    "float64": 8, "float32": 4, "bfloat16": 2, "float16": 2,
    "int8": 1, "uint8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
}


def attention_scores_bytes(batch: int, heads: int, n: int, m: int, dtype: str) -> int:
    return batch * heads * n * m * BYTES[dtype]


def kv_cache_bytes(layers: int, kv_heads: int, head_dim: int, seq_len: int, batch: int, dtype: str) -> int:
    return 2 * layers * kv_heads * head_dim * seq_len * batch * BYTES[dtype]


def attention_params(d_model: int, n_heads: int, n_kv_heads: int, bias: bool) -> int:
    d_head = d_model // n_heads
    q_out, kv_out = n_heads * d_head, n_kv_heads * d_head
    weights = d_model * q_out + 2 * d_model * kv_out + q_out * d_model
    biases = q_out + 2 * kv_out + d_model
    return weights + (biases if bias else 0)


def attention_flops(batch: int, heads: int, n: int, m: int, head_dim: int, causal: bool) -> int:
    if not causal:
        pairs = n * m
    else:
        offset = m - n  # query i sits at position offset + i and sees keys 0..offset + i
        pairs = sum(max(0, min(m, offset + i + 1)) for i in range(n))
    return 4 * batch * heads * head_dim * pairs
