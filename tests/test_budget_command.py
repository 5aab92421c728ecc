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


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--layers", "32", "--heads", "32"), "missing --kv-heads, --head-dim"),
        (("--model", "llama-9"), "unknown model 'llama-9'"),
        (("--model", "gpt2", "--layers", "3"), "not both"),
        (("--layers", "2", "--heads", "6", "--kv-heads", "4", "--head-dim", "8"), "multiple of --kv-heads"),
        (("--model", "gpt2", "--dtype", "fp12"), "unknown dtype"),
        (("--model", "gpt2", "--seq", "0"), "positive"),
    ],
)
def test_usage_errors_exit_2_with_a_reason(capsys: pytest.CaptureFixture[str], argv, message: str) -> None:
    status, _, err = run(capsys, *argv)
    assert status == 2
    assert message in err
