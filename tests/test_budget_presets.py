"""Today's models in `quizprep budget`: each preset pinned against a hand computation from its
published config.json (the numbers are written out here, not taken from quizprep.budget)."""
from __future__ import annotations

import pytest

from quizprep import budget

GIB = 2**30


def _dense(vocab, d, layers, q_out, kv_out, ffn, norms=2, tied=False, extra_per_layer=0) -> int:
    """Embeddings (and an untied LM head) + per layer W_q, W_k, W_v, W_o, a SwiGLU MLP and
    RMSNorms + the final norm, written out from the architecture rather than from budget.py."""
    embeddings = vocab * d * (1 if tied else 2)
    attention = d * q_out + 2 * d * kv_out + q_out * d
    return embeddings + layers * (attention + 3 * d * ffn + norms * d + extra_per_layer) + d


# name: (KV bytes per token in bf16, context, batch, KV bytes of the batch, parameters, active)
HAND = {
    # Llama 3.1: L=80/32/126, G=8, head_dim 128: 2·L·8·128·2 bytes per token.
    "Llama-3.1-8B": (2 * 32 * 8 * 128 * 2, 131072, 2, 2 * 32 * 8 * 128 * 2 * 131072 * 2,
                     _dense(128256, 4096, 32, 4096, 1024, 14336), None),
    "Llama-3.1-70B": (2 * 80 * 8 * 128 * 2, 131072, 1, 40 * GIB,
                      _dense(128256, 8192, 80, 8192, 1024, 28672), None),
    "Llama-3.1-405B": (2 * 126 * 8 * 128 * 2, 131072, 1, 63 * GIB,
                       _dense(128256, 16384, 126, 16384, 1024, 53248), None),
    # Mixtral: 8 experts of 3·4096·14336 and a 4096×8 router per layer, 2 experts active.
    "Mixtral-8x7B-v0.1": (2 * 32 * 8 * 128 * 2, 32768, 4, 16 * GIB,
                          _dense(32000, 4096, 32, 4096, 1024, 8 * 14336, extra_per_layer=4096 * 8),
                          _dense(32000, 4096, 32, 4096, 1024, 2 * 14336, extra_per_layer=4096 * 8)),
    # Qwen2.5: biases on q, k and v (8192 + 1024 + 1024), none on o.
    "Qwen2.5-72B": (2 * 80 * 8 * 128 * 2, 32768, 8, 2 * 80 * 8 * 128 * 2 * 32768 * 8,
                    _dense(152064, 8192, 80, 8192, 1024, 29568, extra_per_layer=8192 + 2 * 1024), None),
    # Gemma 2: 23 global layers keep all 8,192 positions, 23 local ones the last 4,096;
    # 2·16·128·2 = 8,192 bytes per layer and token. Four norms per layer, tied embeddings.
    "Gemma-2-27B": (46 * 8192, 8192, 1, 8192 * (23 * 8192 + 23 * 4096),
                    _dense(256000, 4608, 46, 32 * 128, 16 * 128, 36864, norms=4, tied=True), None),
    # Gemma 3: 10 global layers of 62, the others keep 1,024; q_norm and k_norm add 2·128.
    "Gemma-3-27B": (62 * 8192, 131072, 1, 8192 * (10 * 131072 + 52 * 1024),
                    _dense(262208, 5376, 62, 32 * 128, 16 * 128, 21504, norms=4, tied=True,
                           extra_per_layer=2 * 128), None),
}


def _deepseek_v3(active: bool) -> int:
    d, heads = 7168, 128
    attention = (d * 1536 + 1536 + 1536 * heads * (128 + 64)  # q_a_proj, its norm, q_b_proj
                 + d * (512 + 64) + 512 + 512 * heads * (128 + 128)  # kv_a_proj_with_mqa, norm, kv_b_proj
                 + heads * 128 * d)  # o_proj
    expert = 3 * d * 2048
    experts = 8 if active else 256
    moe = (experts + 1) * expert + d * 256 + 256  # routed + shared, router weight + correction bias
    dense_mlp = 3 * d * 18432
    per_layer_norms = 2 * d
    return (2 * 129280 * d + 61 * (attention + per_layer_norms) + 3 * dense_mlp + 58 * moe + d)


@pytest.mark.parametrize("name", list(HAND))
def test_gqa_presets_match_the_hand_computation(name: str) -> None:
    per_token, context, batch, cache, params, active = HAND[name]
    config = budget.preset(name)
    result = budget.model_budget(config, context, batch, "bf16")
    assert result.kv_cache_bytes_per_token == per_token
    assert result.kv_cache_bytes == cache
    assert result.params == params
    assert result.active_params == (active or params)
    assert result.weights_bytes == 2 * params


def test_deepseek_v3_caches_the_latent_and_the_rope_key() -> None:
    config = budget.preset("deepseek-v3")
    bf16 = budget.model_budget(config, 131072, 1, "bf16")
    # 61 layers × (512 latent + 64 RoPE key) × 2 bytes = 70,272 bytes per token, no factor 2 for K and V.
    assert bf16.kv_cache_bytes_per_token == 61 * (512 + 64) * 2 == 70_272
    assert bf16.kv_cache_bytes == 70_272 * 131072
    assert budget.model_budget(config, 4096, 3, "fp8").kv_cache_bytes == 61 * 576 * 4096 * 3
    assert bf16.params == _deepseek_v3(active=False) == 671_026_419_200
    assert bf16.active_params == _deepseek_v3(active=True)
    # One decode step runs absorbed, as the MLA bank teaches (mla-absorbed-decode-flops): each
    # of 128 heads dots its query with the 576-element latent and RoPE key of every cached token
    # and sums 512-element latents: 2·128·(576 + 512) FLOPs per cached token and layer, 3.4 times
    # the MHA-shaped 2·128·(192 + 128) of a head whose keys and values were rebuilt.
    assert bf16.decode_attention_flops_per_token == 61 * 2 * 128 * (576 + 512) * 131072
    # Absorbed W^UK and W^UV act on the query and the output instead: the same per-token matmuls.
    assert bf16.decode_flops_per_token - bf16.decode_attention_flops_per_token == 2 * budget.matmul_params(config)


def test_deepseek_v3_prefill_rebuilds_keys_and_values() -> None:
    # A prompt of n tokens rebuilds MHA-shaped keys (192) and values (128) once and attends
    # n·(n + 1)/2 causal pairs in each of 61 layers.
    config, n = budget.preset("deepseek-v3"), 4096
    attention = 61 * 2 * 128 * (192 + 128) * n * (n + 1) // 2
    matmuls = 2 * budget.matmul_params(config) * n
    assert budget.prefill_flops_per_token(config, n) == (matmuls + attention) // n


def test_deepseek_v3_against_llama_3_70b_per_layer() -> None:
    # The comparison the KV-cache bank asks: 576 elements per layer against 2·8·128 = 2,048.
    v3, llama = budget.preset("DeepSeek-V3"), budget.preset("llama-3.1-70b")
    assert (v3.kv_elements_per_layer, llama.kv_elements_per_layer) == (576, 2048)


def test_published_totals() -> None:
    # Totals the model cards state: Mixtral 46.7B with 12.9B active, DeepSeek-V3 671B with
    # 37B activated, Llama 3.1 405B, Qwen2.5 72.7B, Gemma 3 27B (25,600M non-embedding).
    assert round(budget.model_params(budget.preset("mixtral")) / 1e8) == 467
    assert round(budget.model_params(budget.preset("mixtral"), active_only=True) / 1e8) == 129
    assert round(budget.model_params(budget.preset("deepseek-v3"), active_only=True) / 1e9) in (37, 38)
    assert round(budget.model_params(budget.preset("llama-3.1-405b")) / 1e9) == 406
    assert round(budget.model_params(budget.preset("qwen2.5-72b")) / 1e8) == 727
    gemma3 = budget.preset("gemma-3-27b")
    assert round((budget.model_params(gemma3) - budget.embedding_params(gemma3)) / 1e6) == 25600


def test_interleaved_windows_cut_decode_attention_in_the_local_layers_only() -> None:
    config = budget.preset("gemma-2-27b")
    # 4·32 heads·128 FLOPs per attended key; 23 global layers see 8,192 keys, 23 local 4,096.
    expected = 4 * 32 * 128 * (23 * 8192 + 23 * 4096)
    assert budget.decode_attention_flops_per_token(config, 8192) == expected
    within = budget.model_budget(config, 4096, 1, "bf16")
    assert within.kv_cache_bytes == 46 * 8192 * 4096  # inside the window every layer keeps all


def test_llama_3_1_keeps_llama_3_shapes_with_128k_context() -> None:
    for size in ("8b", "70b"):
        old, new = budget.preset(f"llama-3-{size}"), budget.preset(f"llama-3.1-{size}")
        assert (old.context_length, new.context_length) == (8192, 131072)
        assert budget.model_params(old) == budget.model_params(new)
