# quizprep: exercise=budget
# source: Hugging Face transformers StaticCache / gpt-fast KVCache as measured by summing a cache module's buffers (key_cache, value_cache and the int64 cache_position / input_pos index kept alongside them)
# style: a memory calculator that adds up every tensor a cache object holds; dtype sizes from a table
# expect: fail diagnosis=kv-position-buffer
# bug: kv_cache_bytes adds an int64 position index per token and sequence (8 bytes · seq_len · batch) to K and V: that buffer is bookkeeping of one implementation, not the KV cache the formula asks for
SIZES = {"float64": 8, "float32": 4, "bfloat16": 2, "float16": 2, "int8": 1, "float8_e4m3fn": 1}


def attention_scores_bytes(batch, heads, n, m, dtype):
    return batch * heads * n * m * SIZES[dtype]


def kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, dtype):
    kv = 2 * layers * batch * kv_heads * seq_len * head_dim * SIZES[dtype]
    positions = seq_len * batch * 8
    return kv + positions


def attention_params(d_model, n_heads, n_kv_heads, bias):
    d_head = d_model // n_heads
    out = d_model * d_model + n_heads * d_head * d_model + 2 * n_kv_heads * d_head * d_model
    if bias:
        out += n_heads * d_head + 2 * n_kv_heads * d_head + d_model
    return out


def attention_flops(batch, heads, n, m, head_dim, causal):
    if not causal:
        return 4 * batch * heads * n * m * head_dim
    pairs = sum(m - n + i + 1 for i in range(n))
    return 4 * batch * heads * pairs * head_dim
