"""`quizprep budget`: presets, a hand-described model, JSON fields, and usage errors."""
from __future__ import annotations

import argparse
import json

import pytest

from quizprep import budget_command


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="quizprep")
    budget_command.register(parser.add_subparsers())
    try:
        args = parser.parse_args(["budget", *argv])
        status = args.handler(args)
    except SystemExit as exit_:
        status = exit_.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_json_for_llama3_8b_carries_bytes_and_flops(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--model", "Llama-3-8B", "--seq", "8192", "--json")
    data = json.loads(out)
    assert status == 0
    assert data["source"] == "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json"
    ours, mha = data["model_attention"], data["mha"]
    assert ours["kv_cache_bytes_per_token"] == 131_072
    assert ours["kv_cache_bytes"] == 2**30
    assert mha["kv_cache_bytes"] == 4 * 2**30
    assert ours["scores_bytes_per_layer"] == 4 * 2**30
    assert ours["weights_bytes"] == 2 * 8_030_261_248
    assert ours["prefill_flops_per_token"] < ours["decode_flops_per_token"]


def test_table_shows_gqa_beside_mha(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--model", "mistral-7b", "--seq", "4096", "--batch", "4")
    assert status == 0
    assert "as MHA (32 KV heads)" in out
    assert "4.00×" in out  # the KV cache ratio
    assert "mistralai/Mistral-7B-v0.1" in out


def test_mistral_past_its_window_keeps_a_rolling_buffer(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps table cells to the terminal width
    status, out, err = run(capsys, "--model", "mistral-7b", "--seq", "32768", "--json")
    data = json.loads(out)
    assert status == 0 and err == "" and data["warnings"] == []
    assert data["config"]["sliding_window"] == 4096
    ours, mha = data["model_attention"], data["mha"]
    assert (ours["kv_cache_tokens"], ours["kv_cache_bytes"]) == (4096, 512 * 2**20)
    assert mha["kv_cache_bytes"] == 2 * 2**30  # the window applies to the MHA comparison too
    assert ours["decode_attention_flops_per_token"] == 32 * 4 * 32 * 128 * 4096
    status, out, _ = run(capsys, "--model", "mistral-7b", "--seq", "32768")
    assert "1 × 4096 tokens (rolling buffer)" in out and "sliding window 4,096" in out


def test_seq_beyond_the_context_length_warns(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "--model", "llama-3-8b", "--seq", "16384", "--json")
    assert status == 0
    expected = ("--seq 16,384 exceeds Llama-3-8B's context length of 8,192 tokens "
                "(max_position_embeddings in its config.json); the numbers are extrapolated.")
    assert json.loads(out)["warnings"] == [expected]
    assert err == f"quizprep budget: warning: {expected}\n"
    assert run(capsys, "--model", "llama-3-8b", "--seq", "8192")[2] == ""


def test_one_kv_head_is_labelled_mqa(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps the title to the terminal width
    argv = ("--layers", "32", "--heads", "32", "--kv-heads", "1", "--head-dim", "128", "--seq", "1024")
    status, out, _ = run(capsys, *argv)
    assert status == 0
    assert "1 KV head (MQA, all 32 query heads share one KV head)" in out
    assert "GQA" not in out
    assert json.loads(run(capsys, *argv, "--json")[1])["config"]["attention"] == "MQA"


def test_hand_described_window(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("--layers", "2", "--heads", "4", "--kv-heads", "2", "--head-dim", "16", "--window", "100")
    data = json.loads(run(capsys, *argv, "--seq", "1000", "--json")[1])
    assert data["model_attention"]["kv_cache_bytes"] == 2 * 2 * 2 * 16 * 100 * 2


def test_mha_model_has_no_comparison_column(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--model", "gpt2", "--seq", "1024", "--dtype", "fp32")
    assert status == 0
    assert "as MHA" not in out
    assert "72.00 KiB" in out  # 2 × 12 × 12 × 64 × 4 bytes per token


def test_hand_described_attention(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys, "--layers", "80", "--heads", "64", "--kv-heads", "8", "--head-dim", "128",
        "--seq", "8192", "--json",
    )
    data = json.loads(out)
    assert status == 0
    assert data["model_attention"]["kv_cache_bytes"] == 2 * 80 * 8 * 128 * 8192 * 2
    assert data["model_attention"]["params"] is None  # no MLP or vocabulary given


@pytest.mark.parametrize(("seq", "tokens"), [("128k", 128_000), ("128K", 128_000), ("1M", 1_000_000),
                                             ("2^17", 131_072), ("1.5k", 1_500), ("8,192", 8_192)])
def test_seq_takes_suffixes_and_powers(capsys: pytest.CaptureFixture[str], seq: str, tokens: int) -> None:
    status, out, _ = run(capsys, "--model", "llama-3-8b", "--seq", seq, "--json")
    data = json.loads(out)
    assert status == 0 and data["seq"] == tokens
    assert data["model_attention"]["kv_cache_bytes"] == 131_072 * tokens  # 128 KiB per token


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--layers", "32", "--heads", "32"), "missing --kv-heads, --head-dim"),
        (("--model", "llama-9"), "unknown model 'llama-9'"),
        (("--model", "gpt2", "--layers", "3"), "not both"),
        (("--model", "mistral-7b", "--window", "1024"), "not both"),
        (("--layers", "2", "--heads", "6", "--kv-heads", "4", "--head-dim", "8"), "multiple of --kv-heads"),
        (("--model", "gpt2", "--dtype", "fp12"), "unknown dtype"),
        (("--model", "gpt2", "--seq", "0"), "positive"),
        (("--model", "gpt2", "--seq", "0.0025k"), "whole number of tokens, got '0.0025k' = 2.5"),
        (("--model", "gpt2", "--seq", "128 GiB"), "such as 4096, 128k or 2^17"),
    ],
)
def test_usage_errors_exit_2_with_a_reason(capsys: pytest.CaptureFixture[str], argv, message: str) -> None:
    status, _, err = run(capsys, *argv)
    assert status == 2
    assert message in err


def test_deepseek_v3_json_has_the_latent_and_no_mha_column(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "--model", "deepseek-v3", "--seq", "128k", "--batch", "2", "--json")
    data = json.loads(out)
    assert status == 0 and err == "" and data["mha"] is None
    assert data["config"]["attention"] == "MLA"
    assert (data["config"]["mla"]["kv_lora_rank"], data["config"]["mla"]["rope_dim"]) == (512, 64)
    assert data["model_attention"]["kv_cache_bytes"] == 61 * 576 * 2 * 128_000 * 2


def test_gemma_table_names_the_windowed_layers(capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    status, out, _ = run(capsys, "--model", "gemma-3-27b", "--seq", "131072")
    assert status == 0
    assert "sliding window 1,024 in 52 of" in out
    assert "(52 windowed layers keep 1,024)" in out and "10.41 GiB" in out
    assert "vision encoder" in out
