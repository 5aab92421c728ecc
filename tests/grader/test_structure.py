"""The structure checks of the module exercises name the projection that is missing or misshapen."""
from __future__ import annotations

import pytest

from conftest import SOLUTIONS

CASES = [
    ("gqa", "self.W_k = nn.Linear(d_model, n_kv_heads * self.d_head)", "self.W_k = nn.Linear(d_model, d_model)",
     "W_k.weight is shape (16, 16); expected (8, 16)"),
    ("mha", "self.W_o = nn.Linear(d_model, d_model)", "self.out_proj = nn.Linear(d_model, d_model)",
     "W_o.weight is missing; expected nn.Linear(12, 12) with weight (12, 12)"),
]


@pytest.mark.parametrize("exercise, line, changed, message", CASES, ids=[case[0] for case in CASES])
def test_a_wrong_projection_is_named(tmp_path, grade_file, exercise, line, changed, message):
    solution = (SOLUTIONS / f"{exercise}.py").read_text()
    assert line in solution
    submission = tmp_path / f"{exercise}.py"
    submission.write_text(solution.replace(line, changed))
    report = grade_file(submission, only=("structure",), exercise=exercise)
    result = next(c for c in report.checks if c.id == "structure")
    assert result.status == "fail" and result.message == message


@pytest.mark.parametrize("exercise", [case[0] for case in CASES])
def test_the_example_solution_has_the_right_projections(grade_file, exercise):
    report = grade_file(SOLUTIONS / f"{exercise}.py", only=("structure",), exercise=exercise)
    assert next(c for c in report.checks if c.id == "structure").status == "pass"
