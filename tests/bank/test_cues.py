"""Form cues (`quizprep.bank.cues`) and generic slips inside a tolerance (`quizprep.bank.audit`):
warnings of `quizprep check`, errors with `--strict`."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from quizprep.bank import cues, load_banks
from quizprep.bank.audit import audited_draws, tolerance_leaks
from quizprep.bank.cues import form_cues, stated_numbers

CUES = Path(__file__).parent / "data" / "cues.yaml"
SAMPLE = Path(__file__).parent / "data" / "valid.yaml"


def check(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "quizprep", "check", *map(str, args)],
                          capture_output=True, text=True)


def warnings_by_id(path: Path) -> dict[str, list[str]]:
    questions = load_banks([path]).questions
    evaluated = audited_draws(questions)
    found: dict[str, list[str]] = {}
    warnings = [leak.error() for leak in tolerance_leaks(questions, evaluated) if not leak.listed]
    for warning in warnings + list(form_cues(questions, evaluated)):
        found.setdefault(warning.id or "", []).append(warning.message)
    return found


def test_each_cue_is_flagged_on_its_question_and_the_fair_one_is_not() -> None:
    found = warnings_by_id(CUES)
    assert set(found) == {"cue-long-correct", "cue-select-all-longer", "cue-follower", "cue-gib-slip",
                          "cue-off-by-one"}
    [long_correct] = found["cue-long-correct"]
    assert "the longest by a clear margin (104 characters, the longest wrong one 14)" in long_correct
    [select_all] = found["cue-select-all-longer"]
    assert "shortest correct 59 characters, longest wrong 31" in select_all
    [follower] = found["cue-follower"]
    assert "predecessor [cue-predecessor] states 11.09" in follower
    # GiB for GB, MiB for MB and KiB for kB are within 8 %; TiB for TB (9 %) is not.
    assert [m.split(" is within")[0] for m in found["cue-gib-slip"]] == [
        "the slip ×0.931", "the slip ×1.074", "the slip ×0.954", "the slip ×1.049", "the slip ×0.977",
        "the slip ×1.024"]
    assert sorted(m.split(" is within")[0] for m in found["cue-off-by-one"]) == [
        "the slip +1 on a count", "the slip -1 on a count"]


def test_a_long_correct_option_within_the_margin_is_fair(tmp_path: Path) -> None:
    bank = tmp_path / "bank.yaml"
    # 104 characters against 90: the correct option is longest, but by less than a quarter.
    bank.write_text(CUES.read_text().replace("To save FLOPs", "To save FLOPs " + "x" * 76))
    assert "cue-long-correct" not in warnings_by_id(bank)


def test_a_predecessor_that_states_another_number_gives_nothing_away(tmp_path: Path) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text(CUES.read_text().replace("x > ln 65504 ≈ 11.09", "x is past about eleven"))
    assert "cue-follower" not in warnings_by_id(bank)


def test_a_chained_choice_whose_correct_option_the_predecessor_states_is_flagged(tmp_path: Path) -> None:
    bank = tmp_path / "bank.yaml"
    text = CUES.read_text().replace("chain: [cue-follower]", "chain: [cue-fair-choice]")
    bank.write_text(text.replace("It hides the future.", "It hides the future; the softmax runs over the key axis."))
    assert "cue-fair-choice" not in warnings_by_id(bank)  # no chain from cue-select-all-longer yet
    bank.write_text(text.replace("The largest fp16 value is 65504",
                                 "Normalised over the key axis, the largest fp16 value is 65504"))
    [message] = warnings_by_id(bank)["cue-fair-choice"]
    assert "[cue-predecessor] states the correct option 'The key axis'" in message


def test_stated_numbers_read_separators_decimals_and_exponents() -> None:
    assert stated_numbers("ln 65,504 ≈ 11.09, 4.2e22 FLOP, step 3, v1.2.3") == [
        (65504, ""), (11.09, ""), (4.2e22, "FLOP"), (3, "")]


SCORES = """\
topic: units
title: A predecessor and a follower shown in MiB
questions:
  - id: unit-predecessor
    kind: choice
    difficulty: 1
    tags: []
    prompt: How many bits does bf16 use?
    explanation: STATED
    references: ["IEEE 754-2008"]
    chain: [unit-follower]
    choices:
      - text: Sixteen
        correct: true
        why: One sign, eight exponent and seven mantissa bits.
      - text: Thirty-two
        why: That is fp32.
  - id: unit-follower
    kind: numeric
    difficulty: 1
    tags: []
    prompt: How large is an n × n fp32 score matrix for n = {{n}}? Answer in MiB.
    explanation: n² × 4 bytes.
    references: ["Vaswani et al. 2017"]
    params:
      n: {choices: [1024, 2048, 4096]}
    answer: n * n * 4
    unit: B
    display_unit: MiB
    tolerance: 0.01
"""


def test_a_number_counts_in_the_display_unit_only_when_the_text_writes_that_unit(tmp_path: Path) -> None:
    bank = tmp_path / "bank.yaml"
    bank.write_text(SCORES.replace("STATED", "bf16 has 16 bits, as fp16 does."))
    assert warnings_by_id(bank) == {}
    bank.write_text(SCORES.replace("STATED", "At n = 2048 the fp32 scores take 16 MiB."))
    [message] = warnings_by_id(bank)["unit-follower"]
    assert "[unit-predecessor] states 16," in message


def test_numbers_the_follower_shows_itself_give_nothing_away(tmp_path: Path) -> None:
    bank = tmp_path / "bank.yaml"
    # 4,194,304 B is the answer for n = 1024, but 1024 is one of the follower's own inputs.
    bank.write_text(SCORES.replace("STATED", "Its inputs are n = 1024, 2048 or 4096."))
    assert warnings_by_id(bank) == {}
    bank.write_text(SCORES.replace("STATED", "At n = 1024 that is 4,194,304 bytes."))
    assert "states 4,194,304," in warnings_by_id(bank)["unit-follower"][0]


def test_warnings_exit_zero_and_strict_makes_them_errors() -> None:
    run = check(CUES)
    assert run.returncode == 0, run.stdout
    assert "no errors, 11 warning(s) (errors with --strict)" in run.stdout
    assert "warning: " in run.stdout and "[cue-long-correct]" in run.stdout
    strict = check(CUES, "--strict", "--json")
    assert strict.returncode == 1
    summary = json.loads(strict.stdout)
    assert summary["warnings"] == [] and len(summary["errors"]) == 11


def test_a_bank_without_cues_is_clean_under_strict() -> None:
    assert check(SAMPLE, "--strict").returncode == 0


def test_comparisons_past_the_budget_are_reported_not_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cues, "COMPARISON_BUDGET", 0)
    [message] = warnings_by_id(CUES)["cue-follower"]
    assert message.startswith("not compared with its predecessor [cue-predecessor]")
