"""The perf phase's secret seed stays in the grader and the clean SDPA process (issue 19, secrets):
it was on the baseline's command line, world-readable in /proc, while the correctness worker
(running the learner's code) was still alive to read it and hand it on."""
from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from test_hostile_submissions import CORRECT_ATTENTION
from test_perf_hostile import PLAN

from quizprep.grader import perf
from quizprep.grader.grade import GradeOptions, grade

pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")
SEED = 7_314_159_265_358_979_323


def _every_process_text() -> dict[int, bytes]:
    """What any process of the machine shows in /proc: command line and environment."""
    seen = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                seen[int(entry.name)] = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
            except OSError:
                continue  # ended meanwhile
    return seen


def test_no_process_shows_the_seed_in_proc(tmp_path):
    path = tmp_path / "attention.py"
    path.write_text(CORRECT_ATTENTION + "def scaled_dot_product_attention(q, k, v, mask=None):\n"
                                        "    return _attend(q, k, v, mask)\n")
    finished = threading.Event()
    thread = threading.Thread(target=lambda: (perf.run_perf(path, plan=PLAN, seed=SEED, timeout=120), finished.set()))
    thread.start()
    baseline_seen, leaks = False, []
    while thread.is_alive():
        for pid, text in _every_process_text().items():
            baseline_seen |= b"quizprep.grader.perf.baseline" in text
            if str(SEED).encode() in text:
                leaks.append(pid)
    thread.join()
    assert finished.is_set()
    assert baseline_seen, "the SDPA process was never seen running"
    assert not leaks


def test_the_correctness_worker_is_gone_before_the_perf_phase(tmp_path, monkeypatch):
    path = tmp_path / "attention.py"
    path.write_text(CORRECT_ATTENTION + "def scaled_dot_product_attention(q, k, v, mask=None):\n"
                                        "    return _attend(q, k, v, mask)\n")
    alive_then = []

    def run_perf(path, exercise, *, limits, **kwargs):
        alive_then.append([pid for pid, text in _every_process_text().items()
                           if b"worker.py" in text and str(path).encode() in text])
        raise perf.PerfError("not timed in this test")

    monkeypatch.setattr("quizprep.grader.perf.phase.run_perf", run_perf)
    report = grade(path, GradeOptions(only=("values",), perf=True))
    assert alive_then == [[]]
    assert report.checks[-1].id == "perf" and "not timed in this test" in report.checks[-1].message
