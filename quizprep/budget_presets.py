"""The models `quizprep budget --model` knows, each copied from its published config.json.

Every number is the config's own field (named in the comment where the name differs from
ours); ``context_length`` is ``max_position_embeddings`` (``n_positions`` for GPT-2).
"""
from __future__ import annotations

from typing import TypedDict

from quizprep.architecture import Mla, ModelConfig, Moe

_HF = "https://huggingface.co/"


class _SharedFields(TypedDict):
    """Fields that every size of one model family has in common."""

    vocab: int
    context_length: int


_LLAMA_3_1 = _SharedFields(vocab=128256, context_length=131072)

_CONFIGS = (
    ModelConfig(
        name="Llama-3-8B", layers=32, d_model=4096, heads=32, kv_heads=8, head_dim=128,
        ffn_dim=14336, vocab=128256, context_length=8192,
        source=_HF + "meta-llama/Meta-Llama-3-8B/blob/main/config.json",
    ),
    ModelConfig(
        name="Llama-3-70B", layers=80, d_model=8192, heads=64, kv_heads=8, head_dim=128,
        ffn_dim=28672, vocab=128256, context_length=8192,
        source=_HF + "meta-llama/Meta-Llama-3-70B/blob/main/config.json",
    ),
    # Llama 3.1 keeps the Llama 3 shapes and extends the context to 128K (rope_scaling "llama3").
    ModelConfig(
        name="Llama-3.1-8B", layers=32, d_model=4096, heads=32, kv_heads=8, head_dim=128,
        ffn_dim=14336, **_LLAMA_3_1,
        source=_HF + "meta-llama/Llama-3.1-8B/blob/main/config.json",
    ),
    ModelConfig(
        name="Llama-3.1-70B", layers=80, d_model=8192, heads=64, kv_heads=8, head_dim=128,
        ffn_dim=28672, **_LLAMA_3_1,
        source=_HF + "meta-llama/Llama-3.1-70B/blob/main/config.json",
    ),
    ModelConfig(
        name="Llama-3.1-405B", layers=126, d_model=16384, heads=128, kv_heads=8, head_dim=128,
        ffn_dim=53248, **_LLAMA_3_1,
        source=_HF + "meta-llama/Llama-3.1-405B/blob/main/config.json",
    ),
    ModelConfig(
        name="Mistral-7B-v0.1", layers=32, d_model=4096, heads=32, kv_heads=8, head_dim=128,
        ffn_dim=14336, vocab=32000, sliding_window=4096, context_length=32768,
        # The paper (Jiang et al. 2023, Table 1) lists window_size 4096 and a training
        # context_len of 8192; the config allows 32,768 positions, the length at which
        # §2 quotes the rolling buffer's 8× cache saving.
        source=_HF + "mistralai/Mistral-7B-v0.1/blob/main/config.json",
    ),
    ModelConfig(
        # sliding_window is null in this config: Mixtral attends its whole 32K context.
        name="Mixtral-8x7B-v0.1", layers=32, d_model=4096, heads=32, kv_heads=8, head_dim=128,
        ffn_dim=14336, vocab=32000, context_length=32768,
        moe=Moe(experts=8, active=2, expert_ffn_dim=14336),
        source=_HF + "mistralai/Mixtral-8x7B-v0.1/blob/main/config.json",
    ),
    ModelConfig(
        name="Qwen2.5-72B", layers=80, d_model=8192, heads=64, kv_heads=8, head_dim=128,
        ffn_dim=29568, vocab=152064, qkv_bias=True, context_length=131072,
        source=_HF + "Qwen/Qwen2.5-72B/blob/main/config.json",
    ),
    ModelConfig(
        # Layer i is local when i is even (Gemma2DecoderLayer.is_sliding): 23 of 46 are global.
        name="Gemma-2-27B", layers=46, d_model=4608, heads=32, kv_heads=16, head_dim=128,
        ffn_dim=36864, vocab=256000, norms_per_layer=4, tied_embeddings=True,
        sliding_window=4096, global_layers=23, context_length=8192,
        source=_HF + "google/gemma-2-27b/blob/main/config.json",
    ),
    ModelConfig(
        # text_config; sliding_window_pattern 6: layers 5, 11, …, 59 are global, 10 of 62.
        name="Gemma-3-27B", layers=62, d_model=5376, heads=32, kv_heads=16, head_dim=128,
        ffn_dim=21504, vocab=262208, norms_per_layer=4, qk_norm=True, tied_embeddings=True,
        sliding_window=1024, global_layers=10, context_length=131072,
        note="Gemma-3-27B: the text decoder only; the SigLIP vision encoder (about 0.4B) is not counted.",
        source=_HF + "google/gemma-3-27b-pt/blob/main/config.json",
    ),
    ModelConfig(
        # head_dim is v_head_dim; each head's key is qk_nope_head_dim + qk_rope_head_dim = 192.
        name="DeepSeek-V3", layers=61, d_model=7168, heads=128, kv_heads=128, head_dim=128,
        ffn_dim=18432, vocab=129280, context_length=163840,
        mla=Mla(kv_lora_rank=512, rope_dim=64, nope_dim=128, v_dim=128, q_lora_rank=1536),
        moe=Moe(experts=256, active=8, expert_ffn_dim=2048, shared=1, dense_layers=3,
                router_bias=True),
        note="DeepSeek-V3: the 671B main model; the checkpoint's multi-token-prediction module "
             "(num_nextn_predict_layers 1) is not counted.",
        source=_HF + "deepseek-ai/DeepSeek-V3/blob/main/config.json",
    ),
    ModelConfig(
        name="Llama-2-7B", layers=32, d_model=4096, heads=32, kv_heads=32, head_dim=128,
        ffn_dim=11008, vocab=32000, context_length=4096,
        source=_HF + "meta-llama/Llama-2-7b-hf/blob/main/config.json",
    ),
    ModelConfig(
        name="GPT-2", layers=12, d_model=768, heads=12, kv_heads=12, head_dim=64,
        ffn_dim=3072, vocab=50257, gated_mlp=False, attention_bias=True, mlp_bias=True,
        layer_norm=True, learned_positions=1024, tied_embeddings=True, context_length=1024,
        # n_inner is null in the config, which means 4 * n_embd = 3072.
        source=_HF + "openai-community/gpt2/blob/main/config.json",
    ),
)

PRESETS: dict[str, ModelConfig] = {config.name.lower(): config for config in _CONFIGS}

# Spellings people type, besides each preset's own name in any case.
_ALIASES = {
    "meta-llama-3-8b": "llama-3-8b", "llama3-8b": "llama-3-8b",
    "meta-llama-3-70b": "llama-3-70b", "llama3-70b": "llama-3-70b",
    "llama3.1-8b": "llama-3.1-8b", "meta-llama-3.1-8b": "llama-3.1-8b",
    "llama3.1-70b": "llama-3.1-70b", "meta-llama-3.1-70b": "llama-3.1-70b",
    "llama3.1-405b": "llama-3.1-405b", "meta-llama-3.1-405b": "llama-3.1-405b",
    "mistral-7b": "mistral-7b-v0.1",
    "mixtral-8x7b": "mixtral-8x7b-v0.1", "mixtral": "mixtral-8x7b-v0.1",
    "qwen2.5-72b": "qwen2.5-72b", "qwen-2.5-72b": "qwen2.5-72b",
    "gemma2-27b": "gemma-2-27b", "gemma3-27b": "gemma-3-27b",
    "deepseek-v3": "deepseek-v3", "deepseekv3": "deepseek-v3",
    "llama2-7b": "llama-2-7b",
    "gpt2": "gpt-2", "gpt-2-small": "gpt-2", "gpt2-small": "gpt-2",
}


def preset(name: str) -> ModelConfig:
    """The preset called ``name`` (case-insensitive; common spellings accepted)."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in PRESETS:
        names = ", ".join(config.name for config in PRESETS.values())
        raise KeyError(f"unknown model {name!r}; presets: {names}")
    return PRESETS[key]
