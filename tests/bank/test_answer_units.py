"""The unit a bare number is read in (`quizprep.bank.answer_units`): a numeric question whose
`display_unit` is not its base unit says so in its prompt ("Answer in GFLOP."), and a prompt that
asks for a unit reads bare numbers in it. Otherwise the feedback "A bare number is read in GFLOP,
as the question asks" blames the learner for a unit the question never named."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from quizprep.bank import NumericQuestion, load_banks
from quizprep.bank.answer_units import answer_unit_warnings, bare_number_unit, names_unit
from quizprep.bank.numeric import draw, judge
from quizprep.bank.units import scale_of

RESULT = load_banks()
ASKED_IN_A_UNIT = [q for q in RESULT.questions if isinstance(q, NumericQuestion) and bare_number_unit(q)]

BANK = """\
topic: units
title: Units a bare number is read in
questions:
  - id: unit-flops
    kind: numeric
    difficulty: 1
    tags: []
    prompt: PROMPT
    explanation: 4·n²·d FLOPs.
    references: ["Vaswani et al. 2017"]
    params:
      n: {choices: [1024, 2048]}
      d: 128
    answer: 4 * n * n * d
    unit: FLOP
    DISPLAY
    tolerance: 0.01
"""


def warnings(tmp_path: Path, prompt: str, display: str = "display_unit: GFLOP") -> list[str]:
    bank = tmp_path / "units.yaml"
    bank.write_text(BANK.replace("PROMPT", prompt).replace("DISPLAY", display))
    return [warning.message for warning in answer_unit_warnings(load_banks([bank]).questions)]


def test_a_display_unit_the_prompt_never_names_is_flagged(tmp_path: Path) -> None:
    [message] = warnings(tmp_path, "How many FLOPs do QKᵀ and PV take for n = {{n}}?")
    assert message.startswith("a bare number is read in GFLOP (display_unit), but the prompt never says so")
    assert 'add "Answer in GFLOP." to the prompt' in message


@pytest.mark.parametrize("prompt", ["How many FLOPs for n = {{n}}? Answer in GFLOP.",
                                    "Give the count for n = {{n}} in GFLOP.",
                                    "How many FLOPs for n = {{n}}? Answer in\\n      GFLOP."])
def test_a_prompt_that_names_the_display_unit_is_fair(tmp_path: Path, prompt: str) -> None:
    assert warnings(tmp_path, f'"{prompt}"') == []


def test_a_rate_or_another_word_does_not_name_the_unit(tmp_path: Path) -> None:
    assert warnings(tmp_path, "A GPU does 989 TFLOP/s in GFLOP/s terms. How many FLOPs for n = {{n}}?")
    assert not names_unit("peak TFLOP/s, in TFLOP/s", "TFLOP") and names_unit("Answer in\n TFLOP.", "TFLOP")
    assert names_unit("Answer in percent.", "%") and not names_unit("MFU of 40%?", "%")


def test_a_prompt_asking_for_a_unit_the_question_does_not_read_is_flagged(tmp_path: Path) -> None:
    [message] = warnings(tmp_path, "How many FLOPs for n = {{n}}? Answer in GFLOP.", display="")
    assert message == ("the prompt asks for the answer in GFLOP, but a bare number is read in FLOP: "
                       "set display_unit: GFLOP, or ask in FLOP")
    assert warnings(tmp_path, "How many FLOPs for n = {{n}}? Answer in FLOPs.", display="") == []


def test_the_check_reports_it_at_the_question_and_strict_fails(tmp_path: Path) -> None:
    bank = tmp_path / "units.yaml"
    bank.write_text(BANK.replace("PROMPT", "How many FLOPs for n = {{n}}?").replace("DISPLAY", "display_unit: GFLOP"))
    run = subprocess.run([sys.executable, "-m", "quizprep", "check", str(bank), "--strict"],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert f"{bank}:4: [unit-flops] a bare number is read in GFLOP (display_unit)" in run.stdout


@pytest.mark.parametrize("question", ASKED_IN_A_UNIT, ids=lambda q: q.id)
def test_every_shipped_question_names_the_unit_its_bare_numbers_are_read_in(question: NumericQuestion) -> None:
    unit = bare_number_unit(question)
    assert unit is not None and names_unit(question.prompt, unit)
    # ... and a bare number in that unit is what the feedback then calls right.
    shown = draw(question, 0)
    assert judge(question, shown, repr(float(shown.answer) / scale_of(unit, question.unit))).correct


def test_the_shipped_flop_questions_ask_in_the_unit_they_read() -> None:
    asked = {q.id: bare_number_unit(q) for q in ASKED_IN_A_UNIT}
    assert asked["complexity-flops-vs-macs"] == "GFLOP" and asked["complexity-causal-flops"] == "TFLOP"
    assert [warning.id for warning in answer_unit_warnings(RESULT.questions)] == []
