"""Each exercise's no-mutation check fails a submission that is right but changes its input in
place (the outputs alone cannot show it), and passes the example solution."""
from __future__ import annotations

import pytest

from conftest import SOLUTIONS

# (exercise, the solution's line, the same computation done in place on an input, the input named)
IN_PLACE = [
    ("attention", "scores.masked_fill(~mask,", "scores.masked_fill(mask.logical_not_(),", "mask"),
    ("mha", "scores.masked_fill(~mask,", "scores.masked_fill(mask.logical_not_(),", "mask"),
    ("softmax", "shifted = x - x.amax(dim=dim, keepdim=True)", "shifted = x.sub_(x.amax(dim=dim, keepdim=True))", "x"),
]


@pytest.mark.parametrize("exercise, line, in_place, name", IN_PLACE, ids=[case[0] for case in IN_PLACE])
def test_an_input_changed_in_place_is_named(tmp_path, grade_file, exercise, line, in_place, name):
    solution = (SOLUTIONS / f"{exercise}.py").read_text()
    assert line in solution
    submission = tmp_path / f"{exercise}.py"
    submission.write_text(solution.replace(line, in_place))
    report = grade_file(submission, only=("no-mutation",), exercise=exercise)
    result = next(c for c in report.checks if c.id == "no-mutation")
    assert result.status == "fail"
    assert f"`{name}` was modified in place" in result.message


@pytest.mark.parametrize("exercise", [case[0] for case in IN_PLACE])
def test_the_example_solution_leaves_its_inputs_alone(grade_file, exercise):
    report = grade_file(SOLUTIONS / f"{exercise}.py", only=("no-mutation",), exercise=exercise)
    assert next(c for c in report.checks if c.id == "no-mutation").status == "pass"
