"""Exercise: the memory and compute budget of attention, by hand.

Four functions, each returning an exact integer. No torch needed (you may use it).

``dtype`` is the name of a PyTorch dtype without the ``torch.`` prefix:
``"float64"``, ``"float32"``, ``"bfloat16"``, ``"float16"``, ``"int8"``, ``"float8_e4m3fn"``.

attention_scores_bytes(batch, heads, n, m, dtype) -> int
    Bytes of ONE materialised score matrix ``Q·Kᵀ`` of shape (batch, heads, n, m):
    n queries against m keys, every element stored in ``dtype``.

kv_cache_bytes(layers, kv_heads, head_dim, seq_len, batch, dtype) -> int
    Bytes of a decoder's KV cache holding ``seq_len`` tokens for each of ``batch``
    sequences: every layer stores a key vector and a value vector of ``head_dim``
    elements per KV head per token. ``kv_heads`` is the number of K/V heads, which with
    grouped-query attention is smaller than the number of query heads.

attention_params(d_model, n_heads, n_kv_heads, bias) -> int
    Parameters of one attention block: W_q (d_model → n_heads·d_head), W_k and W_v
    (d_model → n_kv_heads·d_head) and W_o (n_heads·d_head → d_model), with
    ``d_head = d_model // n_heads``; ``bias=True`` gives every projection a bias vector.

attention_flops(batch, heads, n, m, head_dim, causal) -> int
    Forward FLOPs of the two matmuls ``Q·Kᵀ`` and ``P·V`` (softmax, scaling and masking
    are not counted). One multiply-add is 2 FLOPs. With ``causal=True`` count only the
    (query, key) pairs a query may attend; when m ≥ n the n queries are the LAST n of the
    m positions (a KV cache), so query i (0-based) sees m - n + i + 1 keys.

Bytes are plain bytes: do not convert to GB or GiB.

What the interviewer expects you to say
---------------------------------------
* The KV cache is ``2 · layers · kv_heads · head_dim · bytes`` per token — the 2 is K and V.
  For Llama-3-8B in bf16 that is 128 KiB per token, 1 GiB for 8192 tokens; GQA (8 KV
  heads for 32 query heads) made it 4× smaller than multi-head attention would.
* A materialised score matrix grows with n·m: Llama-3-8B's 32 heads at n = 8192 in bf16 is
  4 GiB per layer, which is why FlashAttention never stores it.
* FLOPs are ``4·B·H·n·m·d`` for the forward pass (two matmuls, 2 FLOPs per multiply-add);
  causal masking roughly halves the useful work, and a kernel only saves it if it skips
  the masked blocks.
* GQA shrinks W_k and W_v and the cache, not the attention FLOPs: every query head still
  attends every key.
"""


def attention_scores_bytes(batch: int, heads: int, n: int, m: int, dtype: str) -> int:
    raise NotImplementedError


def kv_cache_bytes(layers: int, kv_heads: int, head_dim: int, seq_len: int, batch: int, dtype: str) -> int:
    raise NotImplementedError


def attention_params(d_model: int, n_heads: int, n_kv_heads: int, bias: bool) -> int:
    raise NotImplementedError


def attention_flops(batch: int, heads: int, n: int, m: int, head_dim: int, causal: bool) -> int:
    raise NotImplementedError
