"""Merged questions: the id of a question merged away stays known as an alias of the one kept,
because the learner's progress is keyed by it (issue 22, item 4)."""
from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from quizprep.bank import load_banks
from quizprep.study.store import Store

SAMPLE = Path(__file__).parent / "data" / "valid.yaml"
MERGED = {
    "scaling-logit-growth": "numerics-stability-free",
    "flash-online-softmax": "softmax-online-rescale",
    "complexity-flash-flops": "flash-free-complexity",
    "sdpa-forward-flops": "multihead-attention-flops",
    "kv-cache-free-decode-bandwidth": "kv-cache-decode-step-time",
    "kv-cache-offset-mask-code": "masking-kv-cache-offset",  # issue 33: the same rule read from code
    # issue 33's overlap clusters: each asked its cluster's fact again and was rewritten under a new id
    "sdpa-causal-lower-right": "masking-kv-cache-offset",
    "gqa-which-kv-head": "gqa-head-mapping",
    "shrink-interleave-fraction": "long-gemma3-hybrid-cache",
    "long-attention-sinks": "beyond-sinks-why-first",
    "masking-fully-masked-row": "sdpa-fully-masked-row",
    "mla-tokens-fit": "mla-v3-bytes-per-token",
    "shrink-mla-vs-gqa-layer": "mla-gqa-equivalent",
    "shrink-local-global-tradeoffs": "long-hybrid-patterns",
    "mla-mha-equivalent-ratio": "mla-what-is-cached",
    "masking-kv-offset-count": "masking-kv-cache-offset",
    "masking-kv-prefill-free": "masking-kv-cache-offset",
    "masking-nan-debug": "sdpa-fully-masked-row",
    "memory-kv-cache-llama3-70b": "gqa-kv-cache-savings",
    "kv-cache-sliding-window-mistral": "kv-cache-free-sliding-window",
    "serving-split-kv-merge-code": "serving-merge-partials",
    "flash-online-softmax-derivation": "softmax-online-rescale",
    "serving-decode-step-intensity": "complexity-attention-decode-intensity",
}


def with_alias(tmp_path: Path, alias_line: str, *, old: str = "    kind: free\n") -> Path:
    bank = tmp_path / "bank.yaml"
    bank.write_text(SAMPLE.read_text().replace(old, old + alias_line, 1))
    return bank


def test_an_alias_names_the_question_that_took_it_over(tmp_path: Path) -> None:
    result = load_banks([with_alias(tmp_path, "    aliases: [sample-old-free]\n")])
    assert result.errors == [] and result.aliases == {"sample-old-free": "sample-free"}
    [free] = [q for q in result.questions if q.id == "sample-free"]
    assert free.aliases == ("sample-old-free",)


def test_an_alias_that_is_another_questions_id_is_an_error(tmp_path: Path) -> None:
    result = load_banks([with_alias(tmp_path, "    aliases: [sample-choice]\n")])
    [error] = result.errors
    assert error.id == "sample-free" and "alias 'sample-choice' is the id of the question at" in error.message


def test_a_question_whose_id_is_an_earlier_alias_is_an_error(tmp_path: Path) -> None:
    bank = with_alias(tmp_path, "    aliases: [sample-numeric]\n", old="    kind: choice\n")
    [error] = load_banks([bank]).errors
    assert (error.id, error.message) == ("sample-numeric", "'sample-numeric' is already an alias of [sample-choice]")


def test_an_alias_of_its_own_id_is_refused(tmp_path: Path) -> None:
    [error] = load_banks([with_alias(tmp_path, "    aliases: [sample-free]\n")]).errors
    assert "aliases entry 'sample-free' is not another question's id" in error.message


def test_a_chain_to_an_alias_names_the_question_to_chain_to(tmp_path: Path) -> None:
    bank = with_alias(tmp_path, "    aliases: [sample-old-free]\n")
    bank.write_text(bank.read_text().replace("chain: [sample-free]", "chain: [sample-old-free]"))
    [error] = load_banks([bank]).errors
    assert error.id == "sample-numeric"
    assert error.message == "chain: 'sample-old-free' was merged into [sample-free]; chain to that id"


def test_history_under_an_alias_is_not_reported_lost(tmp_path: Path) -> None:
    db = tmp_path / "progress.db"
    with Store.open(db) as store:
        for question_id in ("sample-old-free", "really-gone"):
            store.record_answer(question_id=question_id, topic="t", kind="free", mode="practice", response="r",
                                elapsed_s=3.0, answered_at=datetime(2026, 11, 20, tzinfo=timezone.utc),
                                correct=True, score=1.0)
    bank = with_alias(tmp_path, "    aliases: [sample-old-free]\n")
    run = subprocess.run([sys.executable, "-m", "quizprep", "check", str(bank), "--db", str(db)],
                         capture_output=True, text=True)
    assert run.returncode == 0
    assert "holds history for 1 question id(s) that no bank has any more: really-gone." in run.stderr


def test_the_shipped_duplicates_were_merged_and_their_ids_kept_as_aliases() -> None:
    result = load_banks()
    ids = {question.id for question in result.questions}
    assert result.aliases == MERGED
    assert not ids & MERGED.keys() and set(MERGED.values()) <= ids
