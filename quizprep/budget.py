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
* A sliding window of W keys (Mistral-7B-v0.1: W = 4096) lets a query attend only
  the last W positions, itself included. The KV cache is then a rolling buffer of
  ``min(seq, W)`` positions, and a decode step attends ``min(context, W)`` keys.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

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


@dataclass(frozen=True)
class ModelConfig:
    """The architecture numbers the calculators need, as published in a model's config."""

    name: str
    layers: int
    d_model: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn_dim: int | None = None
    vocab: int | None = None
    gated_mlp: bool = True  # SwiGLU: gate, up and down projections
    attention_bias: bool = False
    mlp_bias: bool = False
    layer_norm: bool = False  # LayerNorm has a bias; RMSNorm does not
    learned_positions: int = 0
    tied_embeddings: bool = False
    sliding_window: int | None = None  # keys a query may attend, itself included
    context_length: int | None = None  # max_position_embeddings (GPT-2: n_positions)
    source: str = ""

    @property
    def is_complete(self) -> bool:
        """True when the MLP and vocabulary are known, so whole-model numbers make sense."""
        return self.ffn_dim is not None and self.vocab is not None

    def as_mha(self) -> "ModelConfig":
        """The same model with one KV head per query head (what GQA saves against)."""
        return replace(self, name=f"{self.name} as MHA", kv_heads=self.heads)

    @property
    def attention_kind(self) -> str:
        """MHA (G = H), MQA (G = 1) or GQA, G being the number of KV heads."""
        if self.kv_heads == self.heads:
            return "MHA"
        return "MQA" if self.kv_heads == 1 else "GQA"

    def cached_tokens(self, seq: int) -> int:
        """Positions the KV cache holds per sequence: a rolling buffer under a sliding window."""
        return seq if self.sliding_window is None else min(seq, self.sliding_window)


# Each preset copies its numbers from the published Hugging Face config.json cited in
# `source`; head_dim is hidden_size / num_attention_heads for all of them, and
# context_length is max_position_embeddings (n_positions for GPT-2).
PRESETS: dict[str, ModelConfig] = {
    config.name.lower(): config
    for config in (
        ModelConfig(
            name="Llama-3-8B", layers=32, d_model=4096, heads=32, kv_heads=8, head_dim=128,
            ffn_dim=14336, vocab=128256, context_length=8192,
            source="https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json",
        ),
        ModelConfig(
            name="Llama-3-70B", layers=80, d_model=8192, heads=64, kv_heads=8, head_dim=128,
            ffn_dim=28672, vocab=128256, context_length=8192,
            source="https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json",
        ),
        ModelConfig(
            name="Mistral-7B-v0.1", layers=32, d_model=4096, heads=32, kv_heads=8, head_dim=128,
            ffn_dim=14336, vocab=32000, sliding_window=4096, context_length=32768,
            # The paper (Jiang et al. 2023, Table 1) lists window_size 4096 and a training
            # context_len of 8192; the config allows 32,768 positions, the length at which
            # §2 quotes the rolling buffer's 8× cache saving.
            source="https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json",
        ),
        ModelConfig(
            name="Llama-2-7B", layers=32, d_model=4096, heads=32, kv_heads=32, head_dim=128,
            ffn_dim=11008, vocab=32000, context_length=4096,
            source="https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json",
        ),
        ModelConfig(
            name="GPT-2", layers=12, d_model=768, heads=12, kv_heads=12, head_dim=64,
            ffn_dim=3072, vocab=50257, gated_mlp=False, attention_bias=True, mlp_bias=True,
            layer_norm=True, learned_positions=1024, tied_embeddings=True, context_length=1024,
            # n_inner is null in the config, which means 4 * n_embd = 3072.
            source="https://huggingface.co/openai-community/gpt2/blob/main/config.json",
        ),
    )
}
_ALIASES = {
    "llama-3-8b": "llama-3-8b", "meta-llama-3-8b": "llama-3-8b", "llama3-8b": "llama-3-8b",
    "llama-3-70b": "llama-3-70b", "meta-llama-3-70b": "llama-3-70b", "llama3-70b": "llama-3-70b",
    "mistral-7b": "mistral-7b-v0.1", "mistral-7b-v0.1": "mistral-7b-v0.1",
    "llama-2-7b": "llama-2-7b", "llama2-7b": "llama-2-7b",
    "gpt-2": "gpt-2", "gpt2": "gpt-2", "gpt-2-small": "gpt-2", "gpt2-small": "gpt-2",
}


def preset(name: str) -> ModelConfig:
    """The preset called ``name`` (case-insensitive; common spellings accepted)."""
    key = _ALIASES.get(name.strip().lower())
    if key is None:
        names = ", ".join(config.name for config in PRESETS.values())
        raise KeyError(f"unknown model {name!r}; presets: {names}")
    return PRESETS[key]


def mlp_params(config: ModelConfig) -> int:
    """Parameters of one MLP block."""
    if config.ffn_dim is None:
        raise ValueError(f"{config.name}: the MLP width is unknown")
    d, f = config.d_model, config.ffn_dim
    matrices = 3 if config.gated_mlp else 2
    biases = (matrices - 1) * f + d if config.mlp_bias else 0
    return matrices * d * f + biases


def _norm_params(config: ModelConfig) -> int:
    return (2 if config.layer_norm else 1) * config.d_model


def layer_attention_params(config: ModelConfig) -> int:
    return attention_params_with_head_dim(
        config.d_model, config.heads, config.kv_heads, config.head_dim, config.attention_bias
    )


def embedding_params(config: ModelConfig) -> int:
    """Token (and learned position) embeddings, plus the LM head when it is not tied."""
    if config.vocab is None:
        raise ValueError(f"{config.name}: the vocabulary size is unknown")
    tokens = config.vocab * config.d_model
    head = 0 if config.tied_embeddings else tokens
    return tokens + head + config.learned_positions * config.d_model


def model_params(config: ModelConfig) -> int:
    """Every parameter: embeddings, per-layer attention + MLP + two norms, the final norm."""
    per_layer = layer_attention_params(config) + mlp_params(config) + 2 * _norm_params(config)
    return embedding_params(config) + config.layers * per_layer + _norm_params(config)


def matmul_params(config: ModelConfig) -> int:
    """Parameters that take part in a matmul per token: every weight matrix and the LM head.

    The embedding lookup, norms and biases cost no multiply-adds worth counting.
    """
    q_width, kv_width = config.heads * config.head_dim, config.kv_heads * config.head_dim
    attention = 2 * config.d_model * q_width + 2 * config.d_model * kv_width
    mlp = (3 if config.gated_mlp else 2) * config.d_model * (config.ffn_dim or 0)
    lm_head = (config.vocab or 0) * config.d_model
    return config.layers * (attention + mlp) + lm_head


def kv_cache_bytes_per_token(config: ModelConfig, dtype: Any) -> int:
    return kv_cache_bytes(config.layers, config.kv_heads, config.head_dim, 1, 1, dtype)


def _layers_attention_flops(config: ModelConfig, n: int, m: int) -> int:
    return config.layers * attention_flops(
        1, config.heads, n, m, config.head_dim, True, config.sliding_window
    )


def prefill_flops_per_token(config: ModelConfig, seq: int) -> int:
    """Average forward FLOPs per token of a causal prompt of ``seq`` tokens (rounded down)."""
    return (2 * matmul_params(config) * seq + _layers_attention_flops(config, seq, seq)) // seq


def decode_attention_flops_per_token(config: ModelConfig, context: int) -> int:
    """Attention FLOPs of one new token over ``context`` positions (itself included), of
    which it attends the last ``sliding_window`` at most."""
    return _layers_attention_flops(config, 1, context)


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
        weights_bytes=None if params is None else params * size,
        attention_weights_bytes_per_layer=layer_attention_params(config) * size,
        kv_cache_bytes_per_token=kv_cache_bytes_per_token(config, dtype),
        kv_cache_tokens=config.cached_tokens(seq),
        kv_cache_bytes=kv_cache_bytes(
            config.layers, config.kv_heads, config.head_dim, config.cached_tokens(seq), batch, dtype
        ),
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
