"""Cross-question checks of `quizprep check`: wrong answers a tolerance would accept, and
near-duplicate prompts (`--similar`)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from quizprep.bank import load_banks, values
from quizprep.bank.audit import prompt_words, similar_prompts, similarity, wrong_answers_accepted

SAMPLE = Path(__file__).parent / "data" / "valid.yaml"
SAMPLE_WRONG = "      - formula: answer / 2\n        message: Only K or only V was counted.\n"


def check(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "quizprep", "check", *map(str, args)],
                          capture_output=True, text=True)


def sample_with_wrong_answer(tmp_path: Path, formula: str) -> Path:
    bank = tmp_path / "bank.yaml"
    extra = f"      - formula: \"{formula}\"\n        message: A slip.\n"
    bank.write_text(SAMPLE.read_text().replace(SAMPLE_WRONG, SAMPLE_WRONG + extra))
    return bank


def test_wrong_answer_inside_tolerance_in_one_draw_is_an_error(tmp_path: Path) -> None:
    # Off by 0.5 % only when batch is 3: every other draw is far from the answer.
    bank = sample_with_wrong_answer(tmp_path, "answer * 1.005 if batch == 3 else answer * 3")
    run = check(bank, "--json")
    assert run.returncode == 1
    [error] = json.loads(run.stdout)["errors"]
    assert (error["file"], error["line"], error["id"]) == (str(bank), 17, "sample-numeric")
    assert "'answer * 1.005 if batch == 3 else answer * 3'" in error["message"]
    assert "within the tolerance ±1%" in error["message"] and "batch=3" in error["message"]


def test_wrong_answer_equal_to_the_answer_is_reported_once(tmp_path: Path) -> None:
    bank = sample_with_wrong_answer(tmp_path, "per_token * seq * batch")
    errors = list(wrong_answers_accepted(load_banks([bank]).questions))
    assert len(errors) == 1 and "'per_token * seq * batch'" in errors[0].message


def test_the_audit_stays_within_the_validators_work_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    questions = load_banks([sample_with_wrong_answer(tmp_path, "per_token * seq * batch")]).questions
    monkeypatch.setattr(values, "FILE_WORK_BUDGET", 1)  # too little work for a single draw
    assert list(wrong_answers_accepted(questions)) == []


def test_wrong_answers_outside_tolerance_in_every_draw_pass(tmp_path: Path) -> None:
    bank = sample_with_wrong_answer(tmp_path, "answer * 1.011")
    assert list(wrong_answers_accepted(load_banks([bank]).questions)) == []
    assert check(bank).returncode == 0


def test_shipped_wrong_answers_are_all_outside_tolerance() -> None:
    assert [str(e) for e in wrong_answers_accepted(load_banks().questions)] == []


def test_similarity_is_the_share_of_distinct_words_in_common() -> None:
    assert similarity(prompt_words("Why divide by √d_k?"), prompt_words("why DIVIDE by d_k")) == 1.0
    assert similarity(prompt_words("softmax rows"), prompt_words("causal mask")) == 0.0
    # 'the', 'of', 'is' are filler: only {size, cache} vs {size, mask} count.
    assert similarity(prompt_words("the size of the cache"), prompt_words("what is the size of a mask")) == 1 / 3


def test_similar_pairs_respect_the_threshold(tmp_path: Path) -> None:
    questions = load_banks([plant_near_duplicate(tmp_path)]).questions
    [pair] = similar_prompts(questions, threshold=0.6)
    assert {pair.first.id, pair.second.id} == {"sample-choice", "planted-copy"}
    assert similar_prompts(questions, threshold=1.0) == []


def plant_near_duplicate(tmp_path: Path) -> Path:
    """The sample bank plus a choice question whose prompt rewords sample-choice's slightly."""
    bank = tmp_path / "planted.yaml"
    copy = (
        "  - id: planted-copy\n    kind: choice\n    difficulty: 1\n    tags: []\n"
        "    prompt: Why do we divide by √d_k?\n    explanation: Variance.\n"
        "    references: [\"Vaswani et al. 2017, §3.2.1\"]\n    choices:\n"
        "      - text: Variance\n        correct: true\n        why: Var(q·k) = d_k.\n"
        "      - text: Speed\n        why: It costs one multiply.\n"
    )
    bank.write_text(SAMPLE.read_text() + copy)
    return bank


def test_check_similar_flags_a_planted_pair_across_banks(tmp_path: Path) -> None:
    shipped = load_banks().questions
    victim = next(q for q in shipped if q.kind == "free")
    planted = tmp_path / "planted.yaml"
    reworded = victim.prompt + " Answer in a few sentences."

    planted.write_text(
        "topic: planted\ntitle: Planted\nquestions:\n  - id: planted-causal-count\n    kind: free\n"
        "    difficulty: 1\n    tags: []\n    prompt: |\n"
        + "".join(f"      {line}\n" for line in reworded.splitlines())
        + "    explanation: x\n    references: [x]\n    model_answer: x\n    rubric:\n"
        + "".join(f"      - {{criterion: c{i}, weight: 1}}\n" for i in range(3))
    )
    run = check(victim.source.file, planted, "--similar", "--json")
    assert run.returncode == 1, run.stdout + run.stderr
    summary = json.loads(run.stdout)
    assert summary["errors"] == []
    [pair] = summary["similar"]
    assert {pair["first"]["id"], pair["second"]["id"]} == {victim.id, "planted-causal-count"}
    assert pair["score"] >= 0.6
    text = check(victim.source.file, planted, "--similar").stdout
    assert f"[{victim.id}] prompt is" in text and "[planted-causal-count]" in text
    assert "1 near-duplicate pair(s) at ≥ 60% shared prompt words" in text


def test_check_similar_passes_the_shipped_banks() -> None:
    run = check("--similar")
    assert run.returncode == 0, run.stdout
    assert "0 near-duplicate pair(s)" in run.stdout


def test_threshold_option_changes_what_is_reported(tmp_path: Path) -> None:
    bank = plant_near_duplicate(tmp_path)
    assert check(bank, "--similar", "--threshold", "1").returncode == 0
    assert check(bank, "--similar", "--threshold", "0.5").returncode == 1


@pytest.mark.parametrize("args", [["--threshold", "0.5"], ["--similar", "--threshold", "0"],
                                  ["--similar", "--threshold", "1.5"]])
def test_bad_threshold_is_a_usage_error(args: list[str]) -> None:
    run = check(SAMPLE, *args)
    assert run.returncode == 2 and "--threshold" in run.stderr
