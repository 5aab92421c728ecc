# quizprep: exercise=budget
# style: a table of bits per element divided by 8 at the end, the causal pairs as full rectangle minus the hidden triangle, integer arithmetic only
# expect: pass
BITS = {"float64": 64, "float32": 32, "bfloat16": 16, "float16": 16, "int8": 8, "float8_e4m3fn": 8}


def _bytes(elements: int, dtype: str) -> int:
    return elements * BITS[dtype] // 8


def attention_scores_bytes(batch: int, heads: int, n: int, m: int, dtype: str) -> int:
    return _bytes(batch * heads * n * m, dtype)


def kv_cache_bytes(layers: int, kv_heads: int, head_dim: int, seq_len: int, batch: int, dtype: str) -> int:
    k_and_v = 2
    return _bytes(k_and_v * layers * kv_heads * head_dim * seq_len * batch, dtype)


def attention_params(d_model: int, n_heads: int, n_kv_heads: int, bias: bool) -> int:
    d_head = d_model // n_heads
    shapes = [(d_model, n_heads * d_head), (d_model, n_kv_heads * d_head),
              (d_model, n_kv_heads * d_head), (n_heads * d_head, d_model)]
    return sum(i * o + (o if bias else 0) for i, o in shapes)


def _visible_pairs(n: int, m: int) -> int:
    # query i sees m - n + i + 1 keys: the n × m rectangle minus a hidden triangle of n(n - 1)/2
    hidden = n * (n - 1) // 2
    return n * m - hidden


def attention_flops(batch: int, heads: int, n: int, m: int, head_dim: int, causal: bool) -> int:
    pairs = _visible_pairs(n, m) if causal else n * m
    return 2 * 2 * batch * heads * pairs * head_dim
