"""What a decoder-only model is made of, as far as memory and FLOP budgets need to know.

The fields mirror the names of a Hugging Face ``config.json`` so that a preset can be checked
against its source line by line. Dense GQA models need only ``ModelConfig``; DeepSeek's
multi-head latent attention adds an ``Mla``, mixtures of experts a ``Moe``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Mla:
    """DeepSeek-V2/V3 multi-head latent attention (``kv_lora_rank`` and friends in the config).

    Each token caches the latent c^KV and the decoupled RoPE key k^R, both shared by every
    head; the per-head keys (``nope_dim`` + ``rope_dim``) and values are rebuilt from them.
    """

    kv_lora_rank: int
    rope_dim: int  # qk_rope_head_dim
    nope_dim: int  # qk_nope_head_dim
    v_dim: int  # v_head_dim
    q_lora_rank: int | None = None  # None: queries are projected from the hidden state directly

    @property
    def cached_elements(self) -> int:
        return self.kv_lora_rank + self.rope_dim


@dataclass(frozen=True)
class Moe:
    """A mixture-of-experts MLP: ``active`` of ``experts`` routed experts run per token."""

    experts: int  # num_local_experts (Mixtral) / n_routed_experts (DeepSeek)
    active: int  # num_experts_per_tok
    expert_ffn_dim: int  # each expert's SwiGLU width (moe_intermediate_size)
    shared: int = 0  # experts every token runs (n_shared_experts)
    dense_layers: int = 0  # leading layers with a dense MLP of ffn_dim (first_k_dense_replace)
    router_bias: bool = False  # DeepSeek-V3's e_score_correction_bias, one per expert


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
    gated_mlp: bool = True  # SwiGLU / GeGLU: gate, up and down projections
    attention_bias: bool = False  # biases on Q, K, V and the output projection (GPT-2)
    qkv_bias: bool = False  # biases on Q, K and V only (Qwen2)
    mlp_bias: bool = False
    layer_norm: bool = False  # LayerNorm has a bias; RMSNorm does not
    norms_per_layer: int = 2  # Gemma 2/3 also normalise after attention and after the MLP
    qk_norm: bool = False  # Gemma 3: an RMSNorm of width head_dim on queries and on keys
    learned_positions: int = 0
    tied_embeddings: bool = False
    sliding_window: int | None = None  # keys a query may attend, itself included
    # With a window, how many layers still attend globally (Gemma 2: every other layer,
    # Gemma 3: one in six); 0 means every layer is windowed (Mistral-7B).
    global_layers: int = 0
    mla: Mla | None = None
    moe: Moe | None = None
    context_length: int | None = None  # max_position_embeddings (GPT-2: n_positions)
    source: str = ""
    note: str = ""  # what the numbers leave out, printed under the table

    @property
    def is_complete(self) -> bool:
        """True when the MLP and vocabulary are known, so whole-model numbers make sense."""
        return self.ffn_dim is not None and self.vocab is not None

    def as_mha(self) -> ModelConfig:
        """The same model with one KV head per query head (what GQA saves against)."""
        return replace(self, name=f"{self.name} as MHA", kv_heads=self.heads)

    @property
    def attention_kind(self) -> str:
        """MLA, MHA (G = H), MQA (G = 1) or GQA, G being the number of KV heads."""
        if self.mla is not None:
            return "MLA"
        if self.kv_heads == self.heads:
            return "MHA"
        return "MQA" if self.kv_heads == 1 else "GQA"

    @property
    def local_layers(self) -> int:
        """Layers that attend only the last ``sliding_window`` positions."""
        return 0 if self.sliding_window is None else self.layers - self.global_layers

    def cached_tokens(self, seq: int) -> int:
        """Positions a windowed layer keeps per sequence: a rolling buffer of the window."""
        return seq if self.sliding_window is None else min(seq, self.sliding_window)

    @property
    def kv_elements_per_layer(self) -> int:
        """Elements one token adds to one layer's cache: K and V per KV head, or MLA's latent."""
        if self.mla is not None:
            return self.mla.cached_elements
        return 2 * self.kv_heads * self.head_dim

    @property
    def qk_dim(self) -> int:
        """Width of each head's query·key dot product."""
        return self.head_dim if self.mla is None else self.mla.nope_dim + self.mla.rope_dim

    @property
    def v_dim(self) -> int:
        return self.head_dim if self.mla is None else self.mla.v_dim
