"""Reports speak once per cause: an untouched stub gets one line, failures that share a cause
share a panel, known runtime errors get a plain hint, and consequences point to their cause."""
from __future__ import annotations

import io

import pytest
import torch
from rich.console import Console

from conftest import HERE

from quizprep.grader.invariants import same_values
from quizprep.grader.report import render

EXERCISES = HERE.parent.parent / "exercises"
ERRORS = HERE / "runtime_errors"


def rendered(report) -> str:
    console = Console(file=io.StringIO(), width=100, color_system=None)
    render(report, console)
    return console.file.getvalue()


def test_untouched_stub_gets_one_line(grade_file):
    report = grade_file(EXERCISES / "mha.py")
    text = rendered(report)
    assert "Not started yet" in text and "mha.py:" in text
    assert "╭" not in text and text.count("NotImplementedError") == 2
    assert not report.passed and len([c for c in report.checks if c.status == "fail"]) == 10


def test_one_panel_lists_every_check_with_the_same_cause(grade_file):
    report = grade_file(HERE / "mutants" / "mha_split_no_transpose.py")
    failed = [c.id for c in report.checks if c.status == "fail"]
    assert len(failed) >= 5 and {c.diagnosis_id for c in report.checks if c.status == "fail"} == {"split-no-transpose"}
    text = rendered(report)
    assert text.count("╭") == 1
    assert "Same cause: also fails " + ", ".join(failed[1:]) in " ".join(text.split())
    assert "Learn it: quizprep --question multihead-split-transpose" in text  # one command away


def test_leakage_from_a_bad_reshape_names_the_reshape(grade_file):
    report = grade_file(HERE / "mutants" / "mha_split_no_transpose.py", only=("causal-leakage",))
    leak = report.checks[-1]
    assert leak.status == "fail" and leak.diagnosis_id == "split-no-transpose"
    assert "transpose" in leak.hint and "mask" not in leak.hint


def test_minus_1e9_in_float16_gets_a_plain_hint(grade_file):
    report = grade_file(ERRORS / "attention_minus_1e9_in_float16.py", only=("dtypes",))
    failure = report.checks[-1]
    assert failure.status == "fail" and "without overflow" in failure.message
    assert "finfo" in failure.hint and failure.quiz == "masking-additive-constants"


@pytest.mark.parametrize("name", ["mha_mask_unsqueezed_again.py", "mha_extended_mask_on_4d.py"])
def test_a_mask_broadcast_error_states_the_expected_layout(grade_file, name):
    report = grade_file(ERRORS / name)
    failures = [c for c in report.checks if c.status == "fail"]
    assert failures and all("(B, 1, 1, m)" in c.hint for c in failures)
    assert all(name in c.where or any(name in line for line in c.traceback) for c in failures)  # the learner's line
    assert rendered(report).count("╭") == 1


def test_float32_softmax_gradients_pass_on_float64_inputs(grade_file):
    report = grade_file(HERE / "production" / "attention_llama_fp32_softmax.py", only=("gradients", "dtypes"))
    assert report.passed, [(c.id, c.message, c.where) for c in report.checks]


HALF_INSIDE = """
import math
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    dtype = q.dtype
    q, k, v = q.half(), k.half(), v.half()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return (weights @ v).to(dtype), weights.to(dtype)
"""


def test_float16_work_on_float32_inputs_is_named_as_precision(grade_file, tmp_path):
    path = tmp_path / "attention.py"
    path.write_text(HALF_INSIDE)
    report = grade_file(path, only=("values",))
    assert report.checks[-1].diagnosis_id == "low-precision", report.checks[-1].diagnosis
    assert "float16-sized errors on float32 inputs" in report.checks[-1].diagnosis


FLOAT32_OUT = """
# quizprep: exercise=softmax
import torch


def stable_softmax(x, dim=-1):
    x = x.double()
    e = (x - x.amax(dim=dim, keepdim=True)).exp()
    return e / e.sum(dim=dim, keepdim=True)
"""


def test_a_result_in_another_dtype_is_named(grade_file, tmp_path):
    path = tmp_path / "softmax.py"
    path.write_text(FLOAT32_OUT)
    failure = grade_file(path, only=("dtypes",)).checks[-1]
    assert failure.status == "fail" and failure.diagnosis_id == "dtype-not-kept", failure.diagnosis
    assert "float64 for float32 input" in failure.diagnosis and "cast back" in failure.hint


def test_outputs_equal_with_nan_in_the_same_places():
    first = {"out": torch.tensor([1.0, float("nan")])}
    assert same_values(first, {"out": torch.tensor([1.0, float("nan")])})
    assert not same_values(first, {"out": torch.tensor([1.0, 0.0])})
    assert not same_values(first, {"out": torch.tensor([2.0, float("nan")])})
