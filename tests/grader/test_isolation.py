"""Every way a submission can misbehave ends as a clean failed check, in time, with no process left."""
from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from quizprep.grader.grade import GradeOptions, grade
from quizprep.grader.output import OutputCapture
from quizprep.grader.worker_session import Limits, WorkerSession

CHECK_SECONDS = 2.0
HEADER = "# quizprep: exercise=attention\nimport math, os, sys\nimport torch\n\n"
CORRECT_BODY = """
scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
if mask is not None:
    scores = scores.masked_fill(~mask, float("-inf"))
weights = torch.softmax(scores, dim=-1)
return weights @ v, weights
"""


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def run_grade(tmp_path: Path, source: str, *, only=("values",), exercise=None, memory=1 << 30, shared=None,
              total_seconds=30):
    """Grade `source`; in a fresh worker unless `shared` (for failures that leave the process usable)."""
    path = tmp_path / "submission.py"
    path.write_text(source)
    limits = Limits(check_seconds=CHECK_SECONDS, total_seconds=total_seconds, memory_bytes=memory)
    if shared is not None:
        report = grade(path, GradeOptions(exercise=exercise, only=only, limits=shared.limits), shared)
        assert shared.alive, "a caught failure should leave the worker running"
        return report, 0.0, path
    session = WorkerSession(path, limits=limits)
    started = time.monotonic()
    try:
        report = grade(path, GradeOptions(exercise=exercise, only=only, limits=limits), session)
    finally:
        session.close()
    elapsed = time.monotonic() - started
    for pgid in session.process_groups:
        deadline = time.monotonic() + 2
        while group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not group_alive(pgid), f"process group {pgid} survived"
    return report, elapsed, path


def function(body: str) -> str:
    return HEADER + "def scaled_dot_product_attention(q, k, v, mask=None):\n" + textwrap.indent(
        textwrap.dedent(body).strip("\n"), "    ") + "\n"


def failed(report, check_id: str):
    result = next(c for c in report.checks if c.id == check_id)
    assert result.status == "fail", (result.status, result.message)
    assert not report.passed
    return result


def test_untouched_stub_reports_not_implemented(tmp_path, shared_worker):
    stub = (Path(__file__).parents[2] / "exercises" / "attention.py").read_text()
    report, _, _ = run_grade(tmp_path, stub, exercise="attention", shared=shared_worker)
    result = failed(report, "values")
    assert result.message == "not implemented yet (raises NotImplementedError)"


def test_syntax_error_names_the_line(tmp_path):
    report, _, path = run_grade(tmp_path, HEADER + "def scaled_dot_product_attention(q, k, v, mask=None)\n    pass\n")
    result = failed(report, "load")
    assert "syntax error" in result.message
    assert result.traceback and result.traceback[0].startswith(f"{path}:5")
    assert all(c.status == "skip" for c in report.checks[1:])


@pytest.mark.parametrize("where", ["call", "import"])
def test_infinite_loop_is_stopped(tmp_path, where):
    source = function("while True:\n    pass") if where == "call" else HEADER + "while True:\n    pass\n"
    report, elapsed, path = run_grade(tmp_path, source)
    result = failed(report, "values" if where == "call" else "load")
    assert "did not finish within 2 s" in result.message
    assert any(line.startswith(f"{path}:") for line in result.traceback)
    assert elapsed < CHECK_SECONDS + 20  # plus starting Python and torch on a busy machine


def test_child_processes_cannot_be_started(tmp_path):
    """The worker's syscall filter refuses new processes (they would escape its limits)."""
    report, _, _ = run_grade(tmp_path, function(
        "import subprocess\nsubprocess.Popen(['sleep', '60'])\nwhile True:\n    pass"))
    assert "Operation not permitted" in failed(report, "values").message


def test_sys_exit(tmp_path, shared_worker):
    report, _, path = run_grade(tmp_path, function("sys.exit(3)"), shared=shared_worker)
    result = failed(report, "values")
    assert "sys.exit(3)" in result.message
    assert result.traceback[-1].startswith(f"{path}:")


def test_os_exit(tmp_path):
    report, _, path = run_grade(tmp_path, function("os._exit(7)"))
    result = failed(report, "values")
    assert "os._exit(7)" in result.message
    assert result.traceback[-1].startswith(f"{path}:")


def test_segfault(tmp_path):
    report, _, path = run_grade(tmp_path, function("import ctypes\nctypes.string_at(0)"))
    result = failed(report, "values")
    assert "segmentation fault" in result.message
    assert any(line.startswith(f"{path}:") for line in result.traceback)


def test_worker_restarts_after_a_crash(tmp_path):
    source = function("if q.dtype == torch.float64:\n    import ctypes\n    ctypes.string_at(0)\n" + CORRECT_BODY)
    # two jailed worker start-ups (torch imported twice) inside one grade: its subject is the restart,
    # so its overall deadline leaves room for both on a machine busy with other tests
    report, _, _ = run_grade(tmp_path, source, only=("shapes", "values"), total_seconds=90)
    assert failed(report, "shapes")
    assert next(c for c in report.checks if c.id == "values").status == "pass"
    assert report.environment["worker_starts"] == 2


@pytest.mark.parametrize("allocation", ["bytearray(3 << 30)", "torch.empty(3 << 30, dtype=torch.uint8)"])
def test_memory_limit(tmp_path, allocation):
    report, _, path = run_grade(tmp_path, function(f"junk = {allocation}\n" + CORRECT_BODY), memory=1 << 30)
    result = failed(report, "values")
    assert "ran out of memory" in result.message
    assert result.traceback[-1].startswith(f"{path}:")


@pytest.mark.parametrize("body, expected", [
    ("return [q]", "returned a list"),
    ("return q @ k.transpose(-2, -1) @ v", "returned a single Tensor"),
    ("return (q @ k.transpose(-2, -1) @ v).numpy(), None", "expected a torch.Tensor"),
])
def test_wrong_return_types(tmp_path, shared_worker, body, expected):
    report, _, _ = run_grade(tmp_path, function(body), shared=shared_worker)
    assert expected in failed(report, "values").message


@pytest.mark.parametrize("body, named", [
    ("import torch.nn.functional as F\nreturn F.scaled_dot_product_attention(q, k, v, attn_mask=mask), None",
     "scaled_dot_product_attention"),
    ("try:\n    return torch._C._nn.scaled_dot_product_attention(q, k, v), None\nexcept BaseException:\n"
     "    return q, q", "scaled_dot_product_attention"),
    ("mha = torch.nn.MultiheadAttention(q.shape[-1], 1)\nreturn q, q", "torch.nn.MultiheadAttention"),
    ("from quizprep.grader import reference\nreturn reference.attention(q, k, v, mask)", "import quizprep"),
    ("return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v)[0], None",
     "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu"),
    ("return torch._C._VariableFunctions._scaled_dot_product_attention_math(q, k, v)",
     "torch._scaled_dot_product_attention_math"),
    ("from torch.nn.attention.flex_attention import flex_attention\nreturn flex_attention(q, k, v), None",
     "flex_attention"),
    ("import torch.nn.attention.flex_attention as fa\nfrom torch._higher_order_ops.flex_attention import "
     "flex_attention as hop\nreturn fa.flex_attention(q, k, v), None", "flex_attention"),
    ("from torch._higher_order_ops.flex_attention import flex_attention as hop\n"
     "from torch.nn.attention.flex_attention import _identity\n"
     "return hop(q, k, v, _identity, (1, 1, None, None, None, None, None, None, None, None, 1, 1, None), "
     "q.shape[-1] ** -0.5, {})[0], None", "flex_attention"),
])
def test_forbidden_calls_are_named(tmp_path, shared_worker, body, named):
    report, _, path = run_grade(tmp_path, function(body), shared=shared_worker)
    result = failed(report, "values")
    assert named in result.message
    assert result.traceback[-1].startswith(f"{path}:")
    assert result.quiz == "sdpa-is-causal-vs-attn-mask"


def test_softmax_exercise_forbids_torch_softmax(tmp_path, shared_worker):
    source = "import torch\n\ndef stable_softmax(x, dim=-1):\n    return x.softmax(dim)\n"
    report, _, _ = run_grade(tmp_path, source, only=("values",), exercise="softmax", shared=shared_worker)
    assert "Tensor.softmax" in failed(report, "values").message


def test_patching_the_comparison_cannot_forge_a_pass(tmp_path):
    source = function("""
        torch.allclose = lambda *a, **k: True
        torch.testing.assert_close = lambda *a, **k: None
        torch.equal = lambda *a, **k: True
        import inspect
        assert not any('reference' in (f.filename or '') for f in inspect.stack())
        return torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype), torch.zeros(*q.shape[:-1], k.shape[-2])
    """)
    report, _, _ = run_grade(tmp_path, source)
    assert "differ" in failed(report, "values").message


def test_output_printed_before_a_failure_is_reported_even_when_the_reader_lags(tmp_path, monkeypatch):
    keep = OutputCapture._keep

    def late_keep(capture: OutputCapture, data: bytes, syncs: int) -> None:
        if data:
            time.sleep(0.3)  # the drain thread not scheduled before the result arrives
        keep(capture, data, syncs)

    monkeypatch.setattr(OutputCapture, "_keep", late_keep)
    report, _, _ = run_grade(tmp_path, function("print('reached the softmax')\nraise ValueError('boom')"))
    assert "reached the softmax" in failed(report, "values").output


def test_printed_output_is_captured_and_truncated(tmp_path, shared_worker):
    report, _, _ = run_grade(tmp_path, function("print('x' * 100000)\nraise ValueError('boom')"),
                             shared=shared_worker)
    result = failed(report, "values")
    assert "ValueError: boom" in result.message
    assert 0 < len(result.output) < 5000
    assert "earlier characters not shown" in result.output
