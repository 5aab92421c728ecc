"""Shared helpers for the grader tests: grading a file in-process with one check selected."""
from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

HERE = Path(__file__).parent
SOLUTIONS = HERE.parent / "solutions"
# How a refused route ends: Landlock and the syscall filter say "permission", and in the jail
# (grader/jail/) what lies outside it does not exist at all.
REFUSALS = ("PermissionError", "not permitted", "FileNotFoundError")
EXPECT = re.compile(r"^# expect: check=(\S+) diagnosis=(\S+)", re.MULTILINE)


def refused(message: str) -> bool:
    return any(word in message for word in REFUSALS)


def expectation(path: Path) -> tuple[str, str]:
    match = EXPECT.search(path.read_text())
    assert match, f"{path.name} has no '# expect:' line"
    return match.group(1), match.group(2)



@pytest.fixture(scope="session", autouse=True)
def hangups_delivered():
    """Graders started by the tests take SIGHUP as a closed terminal would deliver it: a suite run
    under `nohup` ignores it, and the ignoring is inherited, which failed every SIGHUP test."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)

@pytest.fixture(scope="session")
def shared_worker():
    """One learner process for the whole test run: files are loaded into it one after another."""
    from quizprep.grader.worker_session import Limits, WorkerSession

    session = WorkerSession(SOLUTIONS / "attention.py", limits=Limits(check_seconds=30))
    yield session
    session.close()


@pytest.fixture
def grade_file(shared_worker):
    from quizprep.grader.grade import GradeOptions, grade

    def run(path: Path, *, only: tuple[str, ...] = (), exercise: str | None = None):
        return grade(path, GradeOptions(exercise=exercise, only=only, limits=shared_worker.limits), shared_worker)

    return run


@pytest.fixture(scope="module")
def triton_worker():
    """One worker per Triton test module, as the product makes it: compiled on a GPU (no memory
    limit, which a CUDA context cannot live under), interpreted on CPU."""
    from quizprep.grader.grade import GradeOptions, session_for
    from quizprep.grader.worker_session import Limits

    session = session_for(SOLUTIONS / "flash_triton.py", GradeOptions(limits=Limits(check_seconds=60)))
    yield session
    session.close()


@pytest.fixture
def grade_kernel(triton_worker):
    from quizprep.grader.grade import GradeOptions, grade

    def run(path: Path, only: tuple[str, ...] = ()):
        return grade(path, GradeOptions(only=only, limits=triton_worker.limits), triton_worker)

    return run
