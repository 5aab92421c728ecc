"""The catalogue of wrong implementations: each must fail its check and be named correctly."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import HERE, expectation

MUTANTS = sorted((HERE / "mutants").glob("*.py"))


def test_catalogue_is_broad():
    diagnoses = {expectation(path)[1] for path in MUTANTS}
    assert len(MUTANTS) >= 25
    assert len(diagnoses) >= 20


@pytest.mark.parametrize("path", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_mutant_fails_with_its_diagnosis(path: Path, grade_file):
    check_id, diagnosis = expectation(path)
    report = grade_file(path, only=(check_id,))
    result = next(c for c in report.checks if c.id == check_id)
    assert result.status == "fail", result.message
    assert result.diagnosis_id == diagnosis, f"{result.diagnosis!r}\n{result.where}\n{result.smallest}"
    assert result.hint and result.quiz
    assert not report.passed
