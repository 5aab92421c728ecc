"""The banks we ship: clean under `quizprep check`, big enough, and every numeric one evaluates."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from quizprep.bank import NumericQuestion, load_banks
from quizprep.bank.numeric import draw, judge, worked_steps
from quizprep.bank.units import scale_of

RESULT = load_banks()
TOPICS = {"scaling", "softmax", "masking", "multihead", "complexity", "memory", "gqa", "flash",
          "kv_cache", "sdpa"}


def test_shipped_banks_have_no_errors() -> None:
    assert [str(e) for e in RESULT.errors] == []


def test_content_targets() -> None:
    questions = RESULT.questions
    numeric = [q for q in questions if isinstance(q, NumericQuestion)]
    assert len(questions) >= 150
    assert len(numeric) >= 40
    assert sum(q.generated for q in numeric) >= 15
    assert sum(q.kind == "free" for q in questions) >= 30
    assert {q.topic for q in questions} >= TOPICS


@pytest.mark.parametrize("question", [q for q in RESULT.questions if isinstance(q, NumericQuestion)],
                         ids=lambda q: q.id)
def test_numeric_question_evaluates_for_many_draws(question: NumericQuestion) -> None:
    for seed in range(50):
        shown = draw(question, seed)
        assert worked_steps(question, shown)
        if question.unit or not question.display_unit:  # a unitless fraction shown in % is typed in %
            assert judge(question, shown, f"{float(shown.answer)!r} {question.unit}").correct
        if question.display_unit:  # a bare number is in the unit the question asks for
            in_display_unit = float(shown.answer) / scale_of(question.display_unit, question.unit)
            assert judge(question, shown, repr(in_display_unit)).correct


def test_strict_check_is_clean_and_reports_json() -> None:
    # --strict: no form cue, no slip inside a tolerance, no predecessor stating an answer (issue 22).
    run = subprocess.run([sys.executable, "-m", "quizprep", "check", "--strict", "--json"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    summary = json.loads(run.stdout)
    assert summary["errors"] == [] and summary["warnings"] == []
    assert summary["questions"] == len(RESULT.questions)
    assert set(summary["by_topic"]) >= TOPICS
