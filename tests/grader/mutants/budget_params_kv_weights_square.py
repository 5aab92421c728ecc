# quizprep: exercise=budget
# expect: check=attention-params diagnosis=params-gqa-ignored
# Every projection's weight counted d_model × d_model, GQA or not; each bias at its own projection's width.
BYTES = {"float64": 8, "float32": 4, "bfloat16": 2, "float16": 2, "int8": 1, "uint8": 1, "float8_e4m3fn": 1}


def attention_scores_bytes(batch, heads, n, m, dtype):
    return batch * heads * n * m * BYTES[dtype]


def kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, dtype):
    return 2 * layers * kv_heads * head_dim * seq_len * batch * BYTES[dtype]


def attention_params(d_model, n_heads, n_kv_heads, bias):
    d_head = d_model // n_heads
    out_widths = {"q": n_heads * d_head, "k": n_kv_heads * d_head, "v": n_kv_heads * d_head, "o": d_model}
    total = 0
    for width in out_widths.values():
        total += d_model * d_model  # BUG
        if bias:
            total += width
    return total


def attention_flops(batch, heads, n, m, head_dim, causal):
    pairs = sum(max(0, min(m, m - n + i + 1)) for i in range(n)) if causal else n * m
    return 4 * batch * heads * head_dim * pairs
