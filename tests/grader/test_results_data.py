"""Results are data: statuses are enums that read and serialise as their words, and a mismatch
keeps its numbers and renders them once for every report format."""
from __future__ import annotations

import json

import pytest
import torch

from quizprep.grader import exercism
from quizprep.grader.compare import Tolerance, find_mismatch
from quizprep.grader.grade import GradeReport
from quizprep.grader.report import to_json
from quizprep.grader.spec import CheckFailure, CheckResult, Diagnosis, FailureKind, Status


def test_a_status_is_its_word_in_json_text_and_comparisons():
    result = CheckResult("values", "values match", "fail")
    assert result.status is Status.FAIL and result.status == "fail"
    assert f"{result.status}" == str(result.status) == "fail"
    assert json.dumps({"status": result.status}) == '{"status": "fail"}'


def test_a_mismatch_keeps_where_and_by_how_much_as_numbers():
    expected = torch.zeros(2, 3, dtype=torch.float64)
    actual = expected.clone()
    actual[1, 2] = 0.5
    mismatch = find_mismatch("out", actual, expected, Tolerance(1e-3), ("query", "key"))
    assert mismatch is not None
    assert (mismatch.count, mismatch.total, mismatch.index, mismatch.dims) == (1, 6, (1, 2), ("query", "key"))
    assert (mismatch.max_error, mismatch.tolerance, mismatch.got, mismatch.expected) == (0.5, 1e-3, 0.5, 0.0)
    assert mismatch.max_relative == float("inf")
    assert mismatch.headline == "out: 1 of 6 elements differ (tolerance 0.001)"
    assert mismatch.summary == mismatch.headline + "; largest error 0.5 at query=1, key=2 (got 0.5, expected 0)"


def test_a_shape_mismatch_is_its_own_headline():
    mismatch = find_mismatch("out", torch.zeros(2, 3), torch.zeros(3, 2), Tolerance(1e-3))
    assert mismatch is not None and mismatch.describe() == mismatch.headline == "out has shape (2, 3), expected (3, 2)"


def test_mismatches_render_once_into_where_and_stay_out_of_the_reports():
    mismatch = find_mismatch("out", torch.ones(2), torch.zeros(2), Tolerance(1e-3), ("key",))
    assert mismatch is not None
    failure = CheckFailure("differs", where="and more", mismatches=[mismatch])
    assert failure.located() == mismatch.describe() + "\nand more"
    check = CheckResult("values", "values match", Status.FAIL, where=failure.located(), mismatches=[mismatch],
                        failure_kind="exception", failing_code="x.exp()")
    report = GradeReport("softmax", "Stable softmax", "/class/alice.py", [check], {})
    (written,) = json.loads(to_json(report))["checks"]
    assert written["where"] == failure.located()
    assert not {"mismatches", "failure_kind", "failing_code"} & set(written)
    assert failure.located() in exercism.results(report)["tests"][0]["message"]


def test_the_named_mistake_is_kept_and_its_words_fill_what_the_failure_leaves_empty():
    cause = Diagnosis("no-max-shift", "exp overflows", "Subtract the max.", "softmax-max-shift")
    failure = CheckFailure("differs", hint="Look at row 3 first.", named=cause)
    assert failure.named is cause
    assert (failure.diagnosis_id, failure.diagnosis, failure.quiz) == ("no-max-shift", "exp overflows",
                                                                      "softmax-max-shift")
    assert failure.hint == "Look at row 3 first."


@pytest.mark.parametrize(("sent", "read"), [
    ("not_implemented", FailureKind.NOT_IMPLEMENTED), ("syntax", FailureKind.SYNTAX), ("memory", FailureKind.MEMORY),
    # only the grader sees a timeout, a crash or exhausted resources: a reply claiming one is an exception
    ("timeout", FailureKind.EXCEPTION), ("crash", FailureKind.EXCEPTION), ("resources", FailureKind.EXCEPTION),
    ("no such kind", FailureKind.EXCEPTION), (["timeout"], FailureKind.EXCEPTION), (None, FailureKind.EXCEPTION),
])
def test_a_worker_names_only_the_kinds_it_can_tell_apart(sent, read):
    assert FailureKind.from_worker(sent) is read


def test_a_failure_kind_reads_and_prints_as_its_word():
    result = CheckResult("values", "values", "fail", failure_kind="timeout")
    assert result.failure_kind is FailureKind.TIMEOUT and f"{result.failure_kind}" == "timeout"
