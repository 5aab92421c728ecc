"""quizprep.budget: formulas against hand-worked cases, brute force, published totals and memory."""
from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizprep import budget


# --- hand-worked cases --------------------------------------------------------------------


def test_scores_bytes_llama3_8b_layer_at_8192_is_4_gib() -> None:
    # 1 sequence × 32 heads × 8192 × 8192 scores × 2 bytes = 2^0·2^5·2^13·2^13·2^1 = 2^32.
    assert budget.attention_scores_bytes(1, 32, 8192, 8192, "bf16") == 4 * budget.GIB


def test_scores_bytes_uses_m_not_n_for_cross_attention() -> None:
    # 2 × 16 × 128 × 4096 × 2 bytes = 33,554,432.
    assert budget.attention_scores_bytes(2, 16, 128, 4096, "float16") == 33_554_432


def test_kv_cache_llama3_8b_is_128_kib_per_token_and_1_gib_at_8192() -> None:
    # 2 (K, V) × 32 layers × 8 KV heads × 128 × 2 bytes = 131,072 bytes = 128 KiB per token.
    assert budget.kv_cache_bytes(32, 8, 128, 1, 1, "bfloat16") == 128 * 1024
    assert budget.kv_cache_bytes(32, 8, 128, 8192, 1, "bfloat16") == budget.GIB


def test_kv_cache_gpt2_fp32() -> None:
    # 2 × 12 layers × 12 heads × 64 × 1024 tokens × 4 bytes = 75,497,472.
    assert budget.kv_cache_bytes(12, 12, 64, 1024, 1, "fp32") == 75_497_472


def test_attention_params_llama3_8b_and_gpt2() -> None:
    # Llama-3-8B: W_q 4096² + W_k, W_v 4096·1024 each + W_o 4096² = 41,943,040.
    assert budget.attention_params(4096, 32, 8, bias=False) == 41_943_040
    # GPT-2 c_attn 768·2304 + 2304 and c_proj 768·768 + 768 = 1,771,776 + 590,592.
    assert budget.attention_params(768, 12, 12, bias=True) == 2_362_368


def test_attention_flops_full_and_causal() -> None:
    # GPT-2 layer at 1024 tokens: 4 × 12 × 1024² × 64 = 3,221,225,472.
    assert budget.attention_flops(1, 12, 1024, 1024, 64, causal=False) == 3_221_225_472
    # Causal n = m = 4: 1 + 2 + 3 + 4 = 10 pairs; × 4·B·H·d with B=H=1, d=2 → 80.
    assert budget.attention_flops(1, 1, 4, 4, 2, causal=True) == 80
    # One decode step sees every cached key: 4 × 32 × 128 × 8192.
    assert budget.attention_flops(1, 32, 1, 8192, 128, causal=True) == 4 * 32 * 128 * 8192


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), m=st.integers(1, 40), causal=st.booleans())
def test_attended_pairs_matches_counting_the_mask(n: int, m: int, causal: bool) -> None:
    offset = m - n  # queries are the last n of m positions
    allowed = sum(1 for i in range(n) for j in range(m) if not causal or j <= offset + i)
    assert budget.attended_pairs(n, m, causal) == allowed


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 40), m=st.integers(1, 40), window=st.integers(1, 12))
def test_windowed_pairs_match_counting_the_mask(n: int, m: int, window: int) -> None:
    offset = m - n  # query i sits at position offset + i and sees the last `window` positions
    allowed = sum(1 for i in range(n) for j in range(m) if offset + i - window < j <= offset + i)
    assert budget.attended_pairs(n, m, True, window) == allowed


def test_a_window_needs_a_causal_mask() -> None:
    with pytest.raises(ValueError, match="causal=True"):
        budget.attended_pairs(4, 4, False, 2)


def test_causal_is_about_half_but_more() -> None:
    full = budget.attention_flops(4, 16, 4096, 4096, 128, causal=False)
    causal = budget.attention_flops(4, 16, 4096, 4096, 128, causal=True)
    assert full / 2 < causal < full / 2 * 1.001


# --- dtypes and validation ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "size"),
    [("bf16", 2), ("bfloat16", 2), ("torch.float16", 2), ("fp32", 4), ("float64", 8), ("int8", 1), ("fp8", 1)],
)
def test_dtype_bytes_by_name(name: str, size: int) -> None:
    assert budget.dtype_bytes(name) == size


def test_dtype_bytes_accepts_torch_dtypes() -> None:
    torch = pytest.importorskip("torch")
    assert budget.dtype_bytes(torch.bfloat16) == 2
    assert budget.dtype_bytes(torch.float32) == 4


def test_unknown_dtype_and_bad_sizes_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="unknown dtype 'fp12'"):
        budget.dtype_bytes("fp12")
    with pytest.raises(ValueError, match="seq_len must be a positive integer"):
        budget.kv_cache_bytes(1, 1, 1, 0, 1, "bf16")
    with pytest.raises(ValueError, match="multiple of n_kv_heads"):
        budget.attention_params(4096, 32, 6, bias=False)


# --- presets against published parameter counts ------------------------------------------


@pytest.mark.parametrize(
    ("name", "params"),
    [
        # The totals Hugging Face reports for each checkpoint (safetensors metadata).
        ("Llama-3-8B", 8_030_261_248),
        ("Mistral-7B-v0.1", 7_241_732_096),
        ("Llama-2-7B", 6_738_415_616),
        ("GPT-2", 124_439_808),
        ("llama-3-70b", 70_553_706_496),
    ],
)
def test_preset_parameter_totals(name: str, params: int) -> None:
    assert budget.model_params(budget.preset(name)) == params


def test_every_preset_cites_its_config() -> None:
    for config in budget.PRESETS.values():
        assert config.source.startswith("https://huggingface.co/") and config.source.endswith("config.json")
        assert config.heads % config.kv_heads == 0


def test_unknown_preset_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match="Llama-3-8B"):
        budget.preset("llama-9")


def test_gqa_saves_kv_cache_by_the_group_size() -> None:
    config = budget.preset("llama3-8b")
    ours = budget.model_budget(config, 8192, 1, "bf16")
    mha = budget.model_budget(config.as_mha(), 8192, 1, "bf16")
    assert mha.kv_cache_bytes == 4 * ours.kv_cache_bytes
    assert mha.decode_attention_flops_per_token == ours.decode_attention_flops_per_token


def test_mistral_window_makes_the_kv_cache_a_rolling_buffer() -> None:
    config = budget.preset("mistral-7b")
    assert (config.sliding_window, config.context_length) == (4096, 32768)
    long = budget.model_budget(config, 32768, 1, "bf16")
    # 128 KiB per token × 4096 buffered positions = 512 MiB, not 128 KiB × 32768 = 4 GiB.
    assert (long.kv_cache_tokens, long.kv_cache_bytes) == (4096, 512 * 2**20)
    # One decode step attends 4096 keys in each of 32 layers: 32 × 4 × 32 heads × 128 × 4096.
    assert long.decode_attention_flops_per_token == 32 * 4 * 32 * 128 * 4096
    unwindowed = budget.model_budget(replace(config, sliding_window=None), 32768, 1, "bf16")
    assert unwindowed.kv_cache_bytes == 8 * long.kv_cache_bytes
    assert unwindowed.decode_attention_flops_per_token == 8 * long.decode_attention_flops_per_token
    assert unwindowed.prefill_flops_per_token > long.prefill_flops_per_token


def test_within_the_window_nothing_changes() -> None:
    config = budget.preset("mistral-7b")
    assert budget.model_budget(config, 4096, 2, "bf16") == budget.model_budget(
        replace(config, sliding_window=None), 4096, 2, "bf16")


def test_attention_kind_follows_the_number_of_kv_heads() -> None:
    config = budget.preset("llama-3-8b")
    assert [replace(config, kv_heads=g).attention_kind for g in (32, 8, 1)] == ["MHA", "GQA", "MQA"]


def test_decode_flops_are_twice_the_matmul_params_plus_attention() -> None:
    config = budget.preset("gpt2")
    # Matmul weights: 12 layers × (4·768² + 2·768·3072) + LM head 50257·768.
    matmul = 12 * (4 * 768 * 768 + 2 * 768 * 3072) + 50257 * 768
    attention = 12 * 4 * 12 * 64 * 1024
    assert budget.decode_flops_per_token(config, 1024) == 2 * matmul + attention


def test_formatters_name_binary_and_decimal_units() -> None:
    assert budget.format_bytes(4 * budget.GIB) == "4.00 GiB"
    assert budget.format_bytes(512) == "512 B"
    assert budget.format_count(8_030_261_248) == "8.03 G"
    assert budget.format_count(4.29e9, "FLOP") == "4.29 GFLOP"


def test_budget_and_its_command_do_not_import_torch() -> None:
    code = "import sys, quizprep.budget, quizprep.budget_command; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


# --- the formula against memory actually allocated ----------------------------------------


def test_scores_formula_matches_the_memory_a_materialising_attention_allocates() -> None:
    torch = pytest.importorskip("torch")
    from quizprep.grader.learner_side.memaudit import audit

    batch, heads, n, m, d = 2, 3, 48, 40, 16
    q, k, v = torch.randn(batch, heads, n, d), torch.randn(batch, heads, m, d), torch.randn(batch, heads, m, d)

    def naive(q, k, v):
        scores = q @ k.transpose(-2, -1)  # one (B, H, n, m) tensor
        weights = torch.softmax(scores, dim=-1)  # a second
        return weights @ v

    _, report = audit(naive, q, k, v)
    score_sized = [a for a in report.allocations if math.prod(a.shape) == batch * heads * n * m]
    assert len(score_sized) == 2
    one = budget.attention_scores_bytes(batch, heads, n, m, "float32")
    assert [a.nbytes for a in score_sized] == [one, one]
    output = batch * heads * n * d * 4
    # Peak: the scores and the weights alive together, then the output.
    assert report.peak_live_bytes == 2 * one + output
