"""Checks that the outputs alone cannot fail: each is shown failing on the example solution with
one line changed, naming what is wrong, and passing on the solution as it is."""
from __future__ import annotations

import pytest

from conftest import SOLUTIONS

# (exercise, check, the solution's line, the line changed to, the check's message, the cause it names)
EDITS = [
    ("attention", "no-mutation", "scores.masked_fill(~mask,", "scores.masked_fill(mask.logical_not_(),",
     "`mask` was modified in place", "input-modified-in-place"),
    ("mha", "no-mutation", "scores.masked_fill(~mask,", "scores.masked_fill(mask.logical_not_(),",
     "`mask` was modified in place", "input-modified-in-place"),
    ("softmax", "no-mutation", "shifted = x - x.amax(dim=dim, keepdim=True)",
     "shifted = x.sub_(x.amax(dim=dim, keepdim=True))", "`x` was modified in place", "input-modified-in-place"),
    ("gqa", "structure", "self.W_k = nn.Linear(d_model, n_kv_heads * self.d_head)",
     "self.W_k = nn.Linear(d_model, d_model)", "W_k.weight is shape (16, 16); expected (8, 16)",
     "kv-projection-full-width"),
    ("mha", "structure", "self.W_o = nn.Linear(d_model, d_model)", "self.out_proj = nn.Linear(d_model, d_model)",
     "W_o.weight is missing; expected nn.Linear(12, 12) with weight (12, 12)", ""),
]
IDS = [f"{exercise}-{check}" for exercise, check, *_ in EDITS]


def result_of(report, check_id: str):
    return next(c for c in report.checks if c.id == check_id)


@pytest.mark.parametrize("exercise, check, line, changed, message, cause", EDITS, ids=IDS)
def test_the_edited_solution_fails_and_the_message_names_why(tmp_path, grade_file, exercise, check, line,
                                                              changed, message, cause):
    solution = (SOLUTIONS / f"{exercise}.py").read_text()
    assert line in solution
    submission = tmp_path / f"{exercise}.py"
    submission.write_text(solution.replace(line, changed))
    result = result_of(grade_file(submission, only=(check,), exercise=exercise), check)
    assert (result.status, result.message, result.diagnosis_id) == ("fail", message, cause)


@pytest.mark.parametrize("exercise, check", sorted({(e, c) for e, c, *_ in EDITS}))
def test_the_example_solution_passes(grade_file, exercise, check):
    assert result_of(grade_file(SOLUTIONS / f"{exercise}.py", only=(check,), exercise=exercise), check).status == "pass"
