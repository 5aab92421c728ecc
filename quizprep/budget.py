"""Memory and FLOP calculators for attention and decoder-only transformers.

Pure integer arithmetic, no torch: the CLI, the quiz app and the grader all use it.

Conventions, stated once so every number in quizprep means the same thing:

* Bytes are exact integers. ``GiB`` is 2**30 bytes, ``GB`` is 10**9 bytes; the
  formatters below print GiB and say so.
* One multiply-add is **2 FLOPs**. Attention FLOPs count the two matmuls
  (``Q·Kᵀ`` and ``P·V``): ``2·n·m·d`` each, so ``4·B·H·n·m·d`` in the forward
  pass. Softmax, scaling and masking are O(n·m) and left out.
* Causal attention counts only the (query, key) pairs a query may attend. With
  ``m ≥ n`` the ``n`` queries are the *last* ``n`` of ``m`` positions (the KV-cache
  convention of the masking exercise), so query ``i`` sees ``m - n + i + 1`` keys:
  ``n·m - n·(n-1)/2`` pairs in all — a little more than half of ``n·m`` because the
  diagonal is included.
* The KV cache stores one K and one V vector per layer, per KV head, per token:
  ``2·L·G·d_head`` elements per token. G is the number of KV heads: G = H is
  multi-head attention, G = 1 multi-query, anything between grouped-query.
  Multi-head latent attention (DeepSeek-V3) instead caches one latent and one
  decoupled RoPE key per layer and token, shared by all heads:
  ``L·(kv_lora_rank + qk_rope_head_dim)`` elements.
* A sliding window of W keys (Mistral-7B-v0.1: W = 4096) lets a query attend only
  the last W positions, itself included. The KV cache is then a rolling buffer of
  ``min(seq, W)`` positions, and a decode step attends ``min(context, W)`` keys.
  Models that interleave windowed and global layers (Gemma 2: one in two global,
  Gemma 3: one in six) keep every position in the global layers only.
* A mixture of experts stores every expert (the weights) but runs only the active
  and shared ones per token (the FLOPs).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quizprep.architecture import Mla, ModelConfig, Moe
# Re-exported: the CLI, the grader and the tests ask this module for presets.
from quizprep.budget_presets import PRESETS, preset  # noqa: F401

GIB = 2**30
GB = 10**9

# Accepts the spellings people type and the names of torch dtypes (str(torch.bfloat16)
# is "torch.bfloat16"), so callers never need torch to ask for a size.
_DTYPE_BYTES = {
    "float64": 8, "fp64": 8, "double": 8,
    "float32": 4, "fp32": 4, "float": 4,
    "bfloat16": 2, "bf16": 2,
    "float16": 2, "fp16": 2, "half": 2,
    "float8_e4m3fn": 1, "float8_e5m2": 1, "fp8": 1,
    "int8": 1, "uint8": 1,
}


def dtype_bytes(dtype: Any) -> int:
    """Bytes per element of ``dtype``: a name (``"bf16"``, ``"float32"``) or a torch dtype."""
    itemsize = getattr(dtype, "itemsize", None)
    if isinstance(itemsize, int):
        return itemsize
    name = str(dtype).removeprefix("torch.").lower()
    try:
        return _DTYPE_BYTES[name]
    except KeyError:
        known = ", ".join(sorted(_DTYPE_BYTES))
        raise ValueError(f"unknown dtype {dtype!r}; expected one of: {known}") from None


def _positive(**values: int) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")


# --------------------------------------------------------------------------- attention


def attention_scores_bytes(batch: int, heads: int, n: int, m: int, dtype: Any) -> int:
    """Bytes of one materialised score-sized tensor (scores or weights): ``B·H·n·m·bytes``."""
    _positive(batch=batch, heads=heads, n=n, m=m)
    return batch * heads * n * m * dtype_bytes(dtype)


def kv_cache_bytes(
    layers: int, kv_heads: int, head_dim: int, seq_len: int, batch: int, dtype: Any
) -> int:
    """Bytes of a KV cache: K *and* V, for every layer, KV head, token and sequence."""
    _positive(layers=layers, kv_heads=kv_heads, head_dim=head_dim, seq_len=seq_len, batch=batch)
    return 2 * layers * kv_heads * head_dim * seq_len * batch * dtype_bytes(dtype)


def attention_params_with_head_dim(
    d_model: int, n_heads: int, n_kv_heads: int, head_dim: int, bias: bool
) -> int:
    """Parameters of W_q, W_k, W_v, W_o when ``head_dim`` need not be ``d_model / n_heads``."""
    _positive(d_model=d_model, n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim=head_dim)
    if n_heads % n_kv_heads:
        raise ValueError(f"n_heads ({n_heads}) must be a multiple of n_kv_heads ({n_kv_heads})")
    q_width, kv_width = n_heads * head_dim, n_kv_heads * head_dim
    weights = d_model * q_width + 2 * d_model * kv_width + q_width * d_model
    biases = q_width + 2 * kv_width + d_model if bias else 0
    return weights + biases


def attention_params(d_model: int, n_heads: int, n_kv_heads: int, bias: bool) -> int:
    """Parameters of an attention block with ``d_head = d_model / n_heads`` (MHA when equal heads)."""
    _positive(d_model=d_model, n_heads=n_heads)
    if d_model % n_heads:
        raise ValueError(f"d_model ({d_model}) must be a multiple of n_heads ({n_heads})")
    return attention_params_with_head_dim(d_model, n_heads, n_kv_heads, d_model // n_heads, bias)


def attended_pairs(n: int, m: int, causal: bool, window: int | None = None) -> int:
    """(query, key) pairs that take part: ``n·m``, or the causal count with queries last,
    each query seeing at most ``window`` keys (itself included) when a window is given."""
    _positive(n=n, m=m)
    if window is not None:
        _positive(window=window)
        if not causal:
            raise ValueError("a sliding window is a causal mask: pass causal=True with it")
    if not causal:
        return n * m
    # More queries than keys: the first n - m queries see no key at all.
    first = max(m - n, 0)
    return _causal_pairs_before(m, window) - _causal_pairs_before(first, window)


def _causal_pairs_before(positions: int, window: int | None) -> int:
    """Σ min(p + 1, window) over positions p < ``positions``: the pairs of a causal prefix."""
    if window is None or positions <= window:
        return positions * (positions + 1) // 2
    return window * (window + 1) // 2 + (positions - window) * window


def attention_flops(
    batch: int, heads: int, n: int, m: int, head_dim: int, causal: bool, window: int | None = None
) -> int:
    """Forward FLOPs of ``QKᵀ`` and ``PV``: ``4·B·H·d`` per attended (query, key) pair."""
    _positive(batch=batch, heads=heads, head_dim=head_dim)
    return 4 * batch * heads * head_dim * attended_pairs(n, m, causal, window)


# --------------------------------------------------------------------------- models


def _mlp_weights(config: ModelConfig, width: int) -> int:
    return (3 if config.gated_mlp else 2) * config.d_model * width


def mlp_params(config: ModelConfig) -> int:
    """Parameters of one dense MLP block, ``ffn_dim`` wide."""
    if config.ffn_dim is None:
        raise ValueError(f"{config.name}: the MLP width is unknown")
    matrices = 3 if config.gated_mlp else 2
    biases = (matrices - 1) * config.ffn_dim + config.d_model if config.mlp_bias else 0
    return _mlp_weights(config, config.ffn_dim) + biases


def moe_params(config: ModelConfig, moe: Moe, active_only: bool) -> int:
    """One mixture-of-experts block: every expert (or only the ``active`` ones a token runs),
    the shared experts and the router."""
    experts = (moe.active if active_only else moe.experts) + moe.shared
    router = config.d_model * moe.experts + (moe.experts if moe.router_bias else 0)
    return experts * _mlp_weights(config, moe.expert_ffn_dim) + router


def _all_mlp_params(config: ModelConfig, active_only: bool) -> int:
    moe = config.moe
    if moe is None:
        return config.layers * mlp_params(config)
    dense = moe.dense_layers * mlp_params(config) if moe.dense_layers else 0
    return dense + (config.layers - moe.dense_layers) * moe_params(config, moe, active_only)


def _norm_params(config: ModelConfig) -> int:
    return (2 if config.layer_norm else 1) * config.d_model


def _mla_weights(config: ModelConfig, mla: Mla) -> int:
    """W^Q (through the query latent when there is one), W^DKV with W^KR, W^UK with W^UV, W^O."""
    d, heads = config.d_model, config.heads
    query_width = heads * (mla.nope_dim + mla.rope_dim)
    queries = d * query_width if mla.q_lora_rank is None else (d + query_width) * mla.q_lora_rank
    keys_values = d * mla.cached_elements + mla.kv_lora_rank * heads * (mla.nope_dim + mla.v_dim)
    return queries + keys_values + heads * mla.v_dim * d


def _attention_weights(config: ModelConfig) -> int:
    """The attention block's weight matrices, without biases or norms."""
    if config.mla is not None:
        return _mla_weights(config, config.mla)
    return attention_params_with_head_dim(
        config.d_model, config.heads, config.kv_heads, config.head_dim, False
    )


def layer_attention_params(config: ModelConfig) -> int:
    """One layer's attention block with its biases and inner norms (not the layer's own norms)."""
    if config.mla is not None:
        # MLA normalises the KV latent and, when there is one, the query latent.
        return _attention_weights(config) + config.mla.kv_lora_rank + (config.mla.q_lora_rank or 0)
    params = attention_params_with_head_dim(
        config.d_model, config.heads, config.kv_heads, config.head_dim, config.attention_bias
    )
    if config.qkv_bias:
        params += (config.heads + 2 * config.kv_heads) * config.head_dim
    if config.qk_norm:
        params += 2 * config.head_dim
    return params


def embedding_params(config: ModelConfig) -> int:
    """Token (and learned position) embeddings, plus the LM head when it is not tied."""
    if config.vocab is None:
        raise ValueError(f"{config.name}: the vocabulary size is unknown")
    tokens = config.vocab * config.d_model
    head = 0 if config.tied_embeddings else tokens
    return tokens + head + config.learned_positions * config.d_model


def model_params(config: ModelConfig, active_only: bool = False) -> int:
    """Every parameter (or, with ``active_only``, those one token runs through: a mixture of
    experts counts only its active and shared experts): embeddings, per-layer attention, MLP
    and norms, the final norm."""
    per_layer = layer_attention_params(config) + config.norms_per_layer * _norm_params(config)
    return (embedding_params(config) + config.layers * per_layer
            + _all_mlp_params(config, active_only) + _norm_params(config))


def matmul_params(config: ModelConfig) -> int:
    """Parameters that take part in a matmul per token: every weight matrix a token runs
    through (the active experts of a mixture) and the LM head.

    The embedding lookup, norms and biases cost no multiply-adds worth counting.
    """
    if config.moe is None:
        mlp = config.layers * _mlp_weights(config, config.ffn_dim or 0)
    else:
        moe = config.moe
        dense = moe.dense_layers * _mlp_weights(config, config.ffn_dim or 0)
        routed = (moe.active + moe.shared) * _mlp_weights(config, moe.expert_ffn_dim)
        mlp = dense + (config.layers - moe.dense_layers) * (routed + config.d_model * moe.experts)
    lm_head = (config.vocab or 0) * config.d_model
    return config.layers * _attention_weights(config) + mlp + lm_head


def kv_cache_bytes_per_token(config: ModelConfig, dtype: Any) -> int:
    """Bytes one token adds to the caches of all layers (MLA: its latent and RoPE key)."""
    return config.layers * config.kv_elements_per_layer * dtype_bytes(dtype)


def model_kv_cache_bytes(config: ModelConfig, seq: int, batch: int, dtype: Any) -> int:
    """The whole cache for ``batch`` sequences of ``seq`` tokens: global layers keep every
    position, windowed layers a rolling buffer of the window."""
    _positive(seq=seq, batch=batch)
    global_layers = config.layers - config.local_layers
    positions = global_layers * seq + config.local_layers * config.cached_tokens(seq)
    return batch * positions * config.kv_elements_per_layer * dtype_bytes(dtype)


def _layers_attention_flops(config: ModelConfig, n: int, m: int, absorbed: bool = False) -> int:
    """``QKᵀ`` and ``PV`` over every layer. Each head's keys and values are taken as
    materialised, except in ``absorbed`` MLA, where every head dots its query with the cached
    latent and RoPE key and weights the latents themselves (DeepSeek-V2, §2.1.2)."""
    if absorbed and config.mla is not None:
        per_pair = 2 * config.heads * (config.mla.cached_elements + config.mla.kv_lora_rank)
    else:
        per_pair = 2 * config.heads * (config.qk_dim + config.v_dim)
    pairs = (config.layers - config.local_layers) * attended_pairs(n, m, True)
    if config.local_layers:
        pairs += config.local_layers * attended_pairs(n, m, True, config.sliding_window)
    return per_pair * pairs


def prefill_flops_per_token(config: ModelConfig, seq: int) -> int:
    """Average forward FLOPs per token of a causal prompt of ``seq`` tokens (rounded down)."""
    return (2 * matmul_params(config) * seq + _layers_attention_flops(config, seq, seq)) // seq


def decode_attention_flops_per_token(config: ModelConfig, context: int) -> int:
    """Attention FLOPs of one new token over ``context`` positions (itself included), of
    which a windowed layer attends the last ``sliding_window`` at most. MLA decodes the
    absorbed way, as its serving engines do: rebuilding every cached key would cost more than
    the cache saves. W^UK and W^UV then act on the query and the output instead of on the new
    key and value, the same multiply-adds, so the per-token matmul FLOPs do not change."""
    return _layers_attention_flops(config, 1, context, absorbed=True)


def decode_flops_per_token(config: ModelConfig, context: int) -> int:
    """Forward FLOPs for one new token that attends ``context`` positions (itself included)."""
    return 2 * matmul_params(config) + decode_attention_flops_per_token(config, context)


@dataclass(frozen=True)
class ModelBudget:
    """Every number `quizprep budget` prints, in bytes and FLOPs."""

    model: str
    kv_heads: int
    seq: int
    batch: int
    dtype: str
    params: int | None
    active_params: int | None  # per token: differs from params for a mixture of experts
    weights_bytes: int | None
    attention_weights_bytes_per_layer: int
    kv_cache_bytes_per_token: int
    kv_cache_tokens: int
    kv_cache_bytes: int
    scores_bytes_per_layer: int
    prefill_flops_per_token: int | None
    decode_flops_per_token: int | None
    decode_attention_flops_per_token: int


def model_budget(config: ModelConfig, seq: int, batch: int, dtype: str) -> ModelBudget:
    """Weights, KV cache and score memory, FLOPs per token, for ``batch`` sequences of ``seq``."""
    _positive(seq=seq, batch=batch)
    size = dtype_bytes(dtype)
    params = model_params(config) if config.is_complete else None
    return ModelBudget(
        model=config.name,
        kv_heads=config.kv_heads,
        seq=seq,
        batch=batch,
        dtype=dtype,
        params=params,
        active_params=model_params(config, active_only=True) if config.is_complete else None,
        weights_bytes=None if params is None else params * size,
        attention_weights_bytes_per_layer=layer_attention_params(config) * size,
        kv_cache_bytes_per_token=kv_cache_bytes_per_token(config, dtype),
        # Positions each sequence keeps in its longest-reaching layers.
        kv_cache_tokens=seq if config.local_layers < config.layers else config.cached_tokens(seq),
        kv_cache_bytes=model_kv_cache_bytes(config, seq, batch, dtype),
        scores_bytes_per_layer=attention_scores_bytes(batch, config.heads, seq, seq, dtype),
        prefill_flops_per_token=prefill_flops_per_token(config, seq) if config.is_complete else None,
        decode_flops_per_token=decode_flops_per_token(config, seq) if config.is_complete else None,
        decode_attention_flops_per_token=decode_attention_flops_per_token(config, seq),
    )


# --------------------------------------------------------------------------- formatting


def format_bytes(n_bytes: int) -> str:
    """Binary units, named as such: ``1.50 GiB``, ``512 B``."""
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{n_bytes} B" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def format_count(count: float, unit: str = "") -> str:
    """Decimal SI prefixes for counts and FLOPs: ``8.03 G``, ``1.2 TFLOP``."""
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(count) >= scale:
            return f"{count / scale:.3g} {prefix}{unit}".rstrip()
    return f"{count:.3g} {unit}".rstrip()
