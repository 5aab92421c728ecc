"""Example solutions and correct variants in other styles pass every check."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from conftest import HERE, SOLUTIONS

from quizprep.grader.exercises import available

CORRECT = sorted(SOLUTIONS.glob("*.py")) + sorted((HERE / "variants").glob("*.py"))


def test_every_exercise_has_an_example_solution():
    assert {p.stem for p in SOLUTIONS.glob("*.py")} >= set(available())


def test_at_least_eight_variants():
    assert len(list((HERE / "variants").glob("*.py"))) >= 8


@pytest.mark.parametrize("path", CORRECT, ids=[f"{p.parent.name}/{p.stem}" for p in CORRECT])
def test_correct_implementation_passes(path: Path, grade_file):
    if path.stem.endswith("triton") and importlib.util.find_spec("triton") is None:
        pytest.skip("the Triton track needs the optional extra: pip install 'quizprep[triton]'")
    exercise = path.stem if path.parent == SOLUTIONS else None
    report = grade_file(path, exercise=exercise)
    failing = [(c.id, c.status, c.message, c.where) for c in report.checks if c.status != "pass"]
    assert report.passed and not failing, failing
    assert report.score == 1.0
