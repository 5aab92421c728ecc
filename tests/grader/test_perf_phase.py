"""`grade --perf` end to end through the grader's hook, on a tiny CPU plan."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from quizprep.grader import perf
from quizprep.grader.perf import PerfCase, PerfPlan

pytest.importorskip("torch")

SOLUTION = Path(__file__).parents[1] / "solutions" / "attention.py"


@pytest.fixture
def tiny_cpu_plan(monkeypatch: pytest.MonkeyPatch) -> PerfPlan:
    plan = PerfPlan("cpu", (PerfCase(1, 2, 32, 8, False, "float32"), PerfCase(1, 2, 32, 8, True, "float32")),
                    runs=5, warmup=1)
    monkeypatch.setattr(perf.phase, "cpu_plan", lambda kind="attention": plan)
    return plan


def test_grade_with_perf_adds_checks_table_and_json(tiny_cpu_plan: PerfPlan) -> None:
    from rich.console import Console

    from quizprep.grader.grade import GradeOptions, grade
    from quizprep.grader.report import render, to_json

    report = grade(SOLUTION, GradeOptions(perf=True, device="cpu"))
    by_id = {check.id: check for check in report.checks}
    assert by_id["perf-recheck"].status == "pass"
    assert by_id["perf"].status == "pass" and by_id["perf"].message.startswith("CPU, float32 B=1 H=2 n=32")
    data = json.loads(to_json(report))["perf"]
    assert data["device"] == "cpu" and len(data["rows"]) == 2
    assert all(row["yours"]["stats"]["runs"] == 5 for row in data["rows"])
    console = Console(width=200, record=True, file=io.StringIO())
    render(report, console)
    assert "Performance on CPU" in console.export_text()


def test_report_survives_the_round_trip_through_json(tiny_cpu_plan: PerfPlan) -> None:
    report = perf.run_perf(SOLUTION, plan=tiny_cpu_plan, timeout=120)
    again = perf.report_from_dict(json.loads(json.dumps(report.to_dict())))
    assert again.to_dict() == report.to_dict()


def test_an_exercise_without_a_perf_target_is_a_clear_error() -> None:
    with pytest.raises(perf.PerfError, match="no perf comparison is defined for the 'budget' exercise"):
        perf.run_perf(SOLUTION, exercise="budget")
