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
