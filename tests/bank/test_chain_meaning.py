"""The chain check by meaning (`quizprep.bank.chain_meaning`), its threshold tuned on the giveaways
issue 33 lists and on chains that are fine, as they stood before the banks were fixed
(data/chain_cases.yaml), scored over the shipped banks as they are now."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from quizprep.bank import load_banks
from quizprep.bank.chain_meaning import GIVEAWAY_SCORE, ChainScorer, chain_giveaways

CASES = Path(__file__).parent / "data" / "chain_cases.yaml"

# The issue's giveaways that are stated in words (the numeric ones, multihead-param-count and
# numerics-count-stall, give a number away in some draws and are compared as numbers).
GIVEAWAYS = [
    ("scaling-no-scale-effects", "scaling-t5-no-scale"),
    ("multihead-attention-flops", "multihead-what-grows-with-h"),
    ("mla-decoupled-rope-why", "mla-rope-key-shared"),
    ("training-dropout-scale-code", "training-sdpa-dropout-placement"),
    ("kv-cache-max-batch", "kv-cache-paged-attention"),
    ("masks-ignore-index-code", "masks-sft-loss-mask"),
    ("masking-kv-cache-offset", "sdpa-is-causal-alignment"),
    ("sdpa-is-causal-alignment", "sdpa-causal-lower-right"),
    ("sdpa-signature", "sdpa-scale-keyword"),
    ("sdpa-backends", "sdpa-kernel-no-viable"),
    ("serving-prefix-cache-reuse", "serving-prefix-cache-position"),
    ("memory-training-activations", "memory-free-per-head-per-layer"),
    ("softmax-axis", "softmax-wrong-axis-debug"),
    ("flash-free-explain", "flash-free-complexity"),
    ("shrink-kivi-axes", "shrink-kivi-streaming"),
]
# Half-stated in the issue's reading, but in words that other questions use as much: below the limit.
MISSED = [("gqa-free-mha-mqa-gqa", "gqa-free-tensor-parallel"), ("scaling-dk-not-dmodel", "scaling-dmodel-bug")]
FINE = [
    ("long-attention-sinks", "long-streaming-positions"),
    ("flash-io-awareness", "flash-sram-size"),
    ("training-six-n-t", "training-backward-twice"),
    ("mla-free-explain", "mla-free-choose"),
    ("sdpa-is-causal-vs-attn-mask", "sdpa-is-causal-alignment"),
    ("serving-merge-partials", "serving-flash-decoding-why"),
]


@pytest.fixture(scope="module")
def scored() -> dict[tuple[str, str], float]:
    cases = {q.id: q for q in load_banks([CASES]).questions}
    corpus = [q for q in load_banks().questions if q.id not in cases] + list(cases.values())
    scorer = ChainScorer(corpus)
    return {(p, f): scorer.score(cases[p], cases[f]) for p, f in GIVEAWAYS + MISSED + FINE}


def test_every_giveaway_of_the_issue_stated_in_words_is_past_the_limit(scored) -> None:
    assert [pair for pair in GIVEAWAYS if scored[pair] < GIVEAWAY_SCORE] == []


def test_fine_chains_are_below_the_limit_with_room(scored) -> None:
    assert max(scored[pair] for pair in FINE) < GIVEAWAY_SCORE - 0.02


def test_the_known_misses_stay_misses(scored) -> None:
    # Recorded so that a change of scorer that starts catching them is seen and the limit retuned.
    assert all(scored[pair] < GIVEAWAY_SCORE for pair in MISSED)


def test_a_follower_is_flagged_with_its_predecessor_and_score(tmp_path: Path) -> None:
    bank = tmp_path / "chain.yaml"
    text = CASES.read_text().replace("  - id: kv-cache-max-batch\n",
                                     "  - id: kv-cache-max-batch\n    chain: [kv-cache-paged-attention]\n")
    bank.write_text(text)
    [warning] = chain_giveaways(load_banks([bank]).questions)
    assert warning.id == "kv-cache-paged-attention"
    assert "its predecessor [kv-cache-max-batch] states its answer in other words (similarity" in warning.message


def test_the_quiz_app_does_not_import_the_check() -> None:
    code = "import sys, quizprep.tui.app, quizprep.bank; print('bm25s' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"


def test_bm25s_ranks_without_jax_where_jax_is_installed(tmp_path: Path):
    """On a GPU machine with JAX, bm25s's import ran a JAX kernel that took the GPU's memory; the
    check must never import JAX, and bm25s must rank on numpy."""
    jax = tmp_path / "jax"
    jax.mkdir()
    (jax / "__init__.py").write_text("raise SystemExit('jax was imported')\n")
    (jax / "lax.py").write_text("")
    code = ("import sys; import quizprep.bank.chain_meaning; import bm25s.selection as s; "
            "print(s.JAX_IS_AVAILABLE, 'jax' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": f"{tmp_path}:{Path(__file__).parents[2]}", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]
