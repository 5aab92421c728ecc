# quizprep: exercise=budget
# style: a dtype-size table, helpers named after the formulas on the slide, keyword arguments everywhere
# expect: fail diagnosis=kv-no-factor-two
# bug: kv_cache_bytes counts one tensor per layer: the factor 2 for K and V is missing
BYTES_PER_ELEMENT = {
    "float64": 8,
    "float32": 4,
    "bfloat16": 2,
    "float16": 2,
    "int8": 1,
    "float8_e4m3fn": 1,
}


def attention_scores_bytes(batch, heads, n, m, dtype):
    return batch * heads * n * m * BYTES_PER_ELEMENT[dtype]


def kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, dtype):
    per_token = layers * kv_heads * head_dim * BYTES_PER_ELEMENT[dtype]
    return per_token * seq_len * batch


def attention_params(d_model, n_heads, n_kv_heads, bias):
    d_head = d_model // n_heads
    q_out, kv_out = n_heads * d_head, n_kv_heads * d_head
    weights = d_model * q_out + 2 * d_model * kv_out + q_out * d_model
    biases = q_out + 2 * kv_out + d_model if bias else 0
    return weights + biases


def attention_flops(batch, heads, n, m, head_dim, causal):
    if causal:
        pairs = sum(min(m, m - n + i + 1) for i in range(n))
    else:
        pairs = n * m
    return 2 * 2 * batch * heads * pairs * head_dim
