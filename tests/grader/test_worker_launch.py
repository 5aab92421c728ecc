"""A worker can be launched early and waited for later (the device check's CUDA worker starts
while the checks run on the CPU); one launched and never used leaves no process behind."""
from __future__ import annotations

import os

import pytest

from conftest import SOLUTIONS
from quizprep.grader.worker_session import WorkerSession


def test_start_waits_for_a_launched_worker_instead_of_starting_another():
    with WorkerSession(SOLUTIONS / "attention.py") as session:
        session.launch()
        pid = session.process.pid
        info = session.start()
        assert "scaled_dot_product_attention" in info["names"]
        assert (session.starts, session.process.pid) == (1, pid)


def test_closing_a_launched_worker_leaves_no_process():
    session = WorkerSession(SOLUTIONS / "attention.py")
    session.launch()
    pid = session.process.pid
    session.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert session.launched_at is None


def test_a_worker_started_before_the_exercise_is_known_gets_its_guards(tmp_path):
    """`quizprep grade FILE` launches the worker before importing torch (prestart); the exercise's
    forbidden calls are refused all the same."""
    from quizprep.cli.grade_command import prestart
    from quizprep.grader.grade import GradeOptions, grade
    from quizprep.grader.worker_session import Limits

    path = tmp_path / "softmax.py"
    path.write_text("import torch\n\ndef stable_softmax(x, dim=-1):\n    return torch.softmax(x, dim)\n")
    early = prestart(path, Limits(), "cpu")
    assert early is not None and early.forbidden is None
    try:
        report = grade(path, GradeOptions(only=("values",)), prestarted=early)
    finally:
        early.close()
    assert early.forbidden and report.environment["worker_starts"] == 1  # graded in the early worker
    assert report.checks[-1].status == "fail" and "torch.softmax" in report.checks[-1].message, report.checks[-1]


@pytest.mark.parametrize("name", __import__("quizprep.grader.exercises", fromlist=["available"]).available())
def test_whether_a_worker_warms_up_is_known_before_torch_as_its_spec_says(name):
    """`quizprep grade FILE` launches the worker from the exercise's name alone, before torch and
    the spec are imported: both must agree for every exercise, a new one included."""
    from quizprep.grader.exercises import load_spec, warms_up

    assert warms_up(name) == warms_up(name.replace("_", "-")) == load_spec(name).worker_warm_up


WARMED_UP_PROBE = ("import sys\nimport torch\n\n"
                   "def flash_attention(q, k, v, *, causal=False):\n    return q\n\n"
                   "def warmed_up():\n"
                   "    return torch.tensor(['sympy' in sys.modules, 'torch._dynamo' in sys.modules])\n")


@pytest.mark.parametrize("exercise, warmed", [("flash_triton", [False, False]), ("flash", [True, True])])
def test_an_early_worker_warms_up_only_for_an_exercise_that_needs_it(tmp_path, exercise, warmed):
    """The Triton and NumPy tracks take no gradient and probe nothing on the meta device: their early
    worker skips the warm-ups that import sympy and torch._dynamo (seconds of a grade's start)."""
    from quizprep.cli.grade_command import prestart
    from quizprep.grader.worker_session import Limits

    path = tmp_path / "submission.py"
    path.write_text(f"# quizprep: exercise={exercise}\n" + WARMED_UP_PROBE)
    early = prestart(path, Limits(), "cpu")
    assert early is not None
    try:
        early.configure(())
        early.start()
        reply = early.request({"op": "call", "target": "warmed_up", "args": [], "kwargs": {}, "device": "cpu"})
    finally:
        early.close()
    assert reply["value"].tolist() == warmed
