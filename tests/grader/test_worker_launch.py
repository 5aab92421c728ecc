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


@pytest.mark.parametrize("name", __import__("quizprep.grader.exercises", fromlist=["available"]).available())
def test_whether_checks_run_on_a_gpu_is_known_before_torch_as_its_spec_says(name):
    from quizprep.grader.exercises import checked_on_gpu, load_spec

    assert checked_on_gpu(name) == checked_on_gpu(name.replace("_", "-")) == load_spec(name).gpu_kernels


@pytest.mark.parametrize("name", __import__("quizprep.grader.exercises", fromlist=["available"]).available())
def test_whether_the_device_check_probes_a_gpu_is_known_before_torch_as_its_spec_says(name):
    from quizprep.grader.device import decide
    from quizprep.grader.exercises import load_spec, probed_on_gpu

    spec = load_spec(name)
    policy = decide("auto", cuda=True, numpy_track=spec.numpy_track, gpu_kernels=spec.gpu_kernels)
    assert probed_on_gpu(name) == probed_on_gpu(name.replace("_", "-")) == ("cuda" in policy.probes)


def test_on_a_gpu_machine_the_device_checks_worker_starts_before_torch_too(tmp_path, monkeypatch):
    """On an H200 the device check's CUDA worker was launched only once the grader had imported
    torch, and the grade waited for it: it now starts with the checks' worker, and the grade uses it."""
    from quizprep.cli.grade_command import prestart, prestart_device_check
    from quizprep.grader import device as device_module
    from quizprep.grader.grade import GradeOptions, grade
    from quizprep.grader.learner_side import sandbox
    from quizprep.grader.worker_session import Limits

    monkeypatch.setattr(sandbox, "gpu_device_nodes", lambda dev="/dev": ["/dev/nvidia0", "/dev/nvidiactl"])
    for exercise, device in (("softmax_numpy", "auto"), ("flash_triton", "auto"), ("softmax", "cpu")):
        assert prestart_device_check(tmp_path / f"{exercise}.py", Limits(), device) is None, (exercise, device)
    path = tmp_path / "softmax.py"
    path.write_text((SOLUTIONS / "softmax.py").read_text())
    early, early_device = prestart(path, Limits(), "auto"), prestart_device_check(path, Limits(), "auto")
    assert early is not None and early_device is not None
    assert early_device.forbidden is None and early_device.limits.memory_bytes == 0  # Limits.on("cuda")
    monkeypatch.setattr(device_module, "cuda_available", lambda: True)
    try:
        grade(path, GradeOptions(only=("values", "device")), prestarted=early, prestarted_device=early_device)
    finally:
        early.close()
        early_device.close()
    assert early_device.forbidden == ("softmax",) and early_device.starts == 1


@pytest.mark.parametrize("exercise, early", [("attention", True), ("softmax_numpy", True), ("flash_triton", False)])
def test_on_a_gpu_machine_the_worker_starts_before_torch_unless_the_checks_need_the_gpu(
        tmp_path, monkeypatch, exercise, early):
    """Under --device auto every exercise but the Triton track's is checked on the CPU, GPU or
    not; on an H200 its worker started only after the grader's own torch import (3.3 s there)."""
    from quizprep.cli.grade_command import prestart
    from quizprep.grader.learner_side import sandbox
    from quizprep.grader.worker_session import Limits

    monkeypatch.setattr(sandbox, "gpu_device_nodes", lambda dev="/dev": ["/dev/nvidia0", "/dev/nvidiactl"])
    path = tmp_path / "submission.py"
    path.write_text(f"# quizprep: exercise={exercise}\n")
    session = prestart(path, Limits(), "auto")
    try:
        assert (session is not None) == early
    finally:
        if session is not None:
            session.close()


LOADED_PROBE = ("\nimport sys\n\n"
                "def loaded():\n"
                "    return torch.tensor([name in sys.modules for name in ('sympy', 'torch._dynamo')])\n")
WARMED_UP_PROBE = "import torch\n\ndef flash_attention(q, k, v, *, causal=False):\n    return q\n" + LOADED_PROBE


@pytest.mark.parametrize("exercise, warmed", [("flash_triton", [False, False]), ("flash", [True, False])])
def test_an_early_worker_warms_up_only_for_an_exercise_that_needs_it(tmp_path, exercise, warmed):
    """The Triton and NumPy tracks take no gradient and probe nothing on the meta device: their early
    worker skips the warm-ups, which import sympy (seconds of a grade's start). The others' warm-up
    leaves torch._dynamo unimported (see the next test)."""
    from quizprep.cli.grade_command import prestart
    from quizprep.grader.worker_session import Limits

    path = tmp_path / "submission.py"
    path.write_text(f"# quizprep: exercise={exercise}\n" + WARMED_UP_PROBE)
    early = prestart(path, Limits(), "cpu")
    assert early is not None
    try:
        early.configure(())
        early.start()
        reply = early.request({"op": "call", "target": "loaded", "args": [], "kwargs": {}, "device": "cpu"})
    finally:
        early.close()
    assert reply["value"].tolist() == warmed


@pytest.mark.parametrize("exercise", ["attention", "flash"])
def test_a_whole_grade_on_the_meta_device_leaves_torch_dynamo_unimported(tmp_path, exercise):
    """PyTorch's Python kernels import torch._dynamo on their first call (1.5-2 s of the worker's
    CPU) unless the warm-up gave them their function to run (torch_start.run_without_dynamo): a
    correct file still passes every check, the device check's meta probes included, without it."""
    from quizprep.grader.grade import GradeOptions, grade
    from quizprep.grader.exercises import load_spec

    path = tmp_path / f"{exercise}.py"
    path.write_text((SOLUTIONS / f"{exercise}.py").read_text() + LOADED_PROBE)
    with WorkerSession(path, forbidden=load_spec(exercise).forbidden) as session:
        report = grade(path, GradeOptions(seed=3), session)
        reply = session.request({"op": "call", "target": "loaded", "args": [], "kwargs": {}, "device": "cpu"})
    assert report.passed, [(check.id, check.message) for check in report.checks if check.status != "pass"]
    assert "device" in [check.id for check in report.checks]
    assert reply["value"].tolist() == [True, False]
