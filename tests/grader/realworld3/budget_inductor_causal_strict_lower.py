# quizprep: exercise=budget
# style: a FLOP counter in the manner of a compiler's cost helpers, counting the strictly-lower triangle
# expect: fail diagnosis=causal-flops-no-diagonal
# bug: a causal query is counted against the keys before it, never its own
BYTES_PER = {"float64": 8, "float32": 4, "bfloat16": 2, "float16": 2, "int8": 1}


def attention_scores_bytes(batch, heads, n, m, dtype):
    return batch * heads * n * m * BYTES_PER[dtype]


def kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, dtype):
    return 2 * layers * kv_heads * head_dim * seq_len * batch * BYTES_PER[dtype]


def attention_params(d_model, n_heads, n_kv_heads, bias):
    head = d_model // n_heads
    proj = [(d_model, n_heads * head), (d_model, n_kv_heads * head), (d_model, n_kv_heads * head),
            (n_heads * head, d_model)]
    return sum(i * o + (o if bias else 0) for i, o in proj)


def attention_flops(batch, heads, n, m, head_dim, causal):
    if causal:
        past = m - n
        pairs = n * past + n * (n - 1) // 2
    else:
        pairs = n * m
    return 2 * 2 * batch * heads * pairs * head_dim
