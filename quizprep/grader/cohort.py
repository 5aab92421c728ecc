"""Grading a class: every submission in a folder, several at once, one verdict row each.

Each job is a thread of the grader that drives its own worker process (the learner's code and
its torch work run there, so threads in the grader are enough to keep N cores busy). A job
keeps its worker for the next submission, so torch is imported once per job, not once per file.
It starts a fresh worker instead when the previous submission may have left the process in any
other state than a clean one:

* the worker is gone (os._exit, a segfault, a time-out or a memory kill end it, and the grader
  closes it);
* the worker runs more threads or has child processes it did not have before any learner code
  ran (a thread left behind could act on the next file);
* the CPU time its limit (RLIMIT_CPU) leaves is less than one submission's allowance, which
  could fail an innocent file (the worker renews the limit when it loads a file; this guards
  a worker where that did not happen).

What a reused worker cannot rule out is a submission that quietly changes the process's global
state (``torch.set_default_dtype``, a monkeypatched torch function): with ``fresh=True`` every
submission gets a worker of its own, at the cost of one torch import each.
"""
from __future__ import annotations

import dataclasses
import os
import queue
import secrets
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from quizprep.grader.grade import GradeOptions, GradeReport, grade
from quizprep.grader.session import LearnerFailure, WorkerSession

STOP_WAIT_SECONDS = 10.0  # for jobs to close their workers once the run is stopped


@dataclass
class CohortRow:
    """One submission's verdict. `error` is set when the grader itself could not grade the file."""

    file: str
    score: float
    passed: bool
    failed: list[str]
    diagnoses: list[str]
    seconds: float
    seed: int | None = None
    error: str = ""
    report: GradeReport | None = field(default=None, repr=False, compare=False)

    def summary(self) -> dict[str, Any]:
        return {"file": self.file, "score": self.score, "passed": self.passed, "failed": self.failed,
                "diagnoses": self.diagnoses, "seconds": round(self.seconds, 3), "seed": self.seed, "error": self.error}


def submissions(folder: Path) -> list[Path]:
    """The Python files directly in `folder`, sorted by name (a package marker is not a submission)."""
    return sorted(p for p in folder.glob("*.py") if p.is_file() and p.name != "__init__.py")


def row_from(report: GradeReport, file: str, seconds: float) -> CohortRow:
    failed = [c.id for c in report.checks if c.status in {"fail", "error"}]
    diagnoses = list(dict.fromkeys(c.diagnosis_id for c in report.checks if c.diagnosis_id))
    return CohortRow(file, report.score, report.passed, failed, diagnoses, seconds,
                     report.environment.get("seed"), report=report)


class TrackedSession(WorkerSession):
    """A worker session that knows the threads and children its process had before learner code."""

    def __init__(self, *args: Any, stopping: threading.Event, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.baseline: tuple[int, int] | None = None
        self.stopping = stopping

    def start(self) -> dict[str, Any]:
        if self.stopping.is_set():  # a check restarting its worker after the run was stopped
            raise RuntimeError("grading was stopped")
        return super().start()

    def warm_up(self) -> None:
        """Start the worker on the (empty) placeholder file it was made with and note its threads
        and children; a failed start is left to the first submission (which then retires it)."""
        try:
            self.start()
        except LearnerFailure:
            return
        assert self.process is not None
        self.baseline = _threads_and_children(self.process.pid)

    def reusable(self) -> bool:
        """Alive, with no thread or child left behind, and CPU time left for a whole submission."""
        if not self.alive or self.process is None:
            return False
        pid = self.process.pid
        cpu_left = _cpu_limit(pid) - _cpu_used(pid)
        return _threads_and_children(pid) == self.baseline and cpu_left > self.limits.total_seconds


def _threads_and_children(pid: int) -> tuple[int, int]:
    """How many threads the process runs and how many children it has (Linux /proc; else 0, 0)."""
    task = Path(f"/proc/{pid}/task")
    try:
        threads = list(task.iterdir())
        children = sum(len((t / "children").read_text().split()) for t in threads)
    except OSError:
        return 0, 0
    return len(threads), children


def _cpu_used(pid: int) -> float:
    """User plus system CPU seconds of the process so far (0 where /proc is missing)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def _cpu_limit(pid: int) -> float:
    """The process's soft RLIMIT_CPU in seconds (infinite when unlimited or unknown)."""
    try:
        for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
            if line.startswith("Max cpu time"):
                soft = line.split()[3]
                return float("inf") if soft == "unlimited" else float(soft)
    except OSError:
        pass
    return float("inf")


class Cohort:
    """Grades `files` with `jobs` workers; `on_done` is called (from a job's thread) per row."""

    def __init__(self, files: list[Path], options: GradeOptions, *, jobs: int, root: Path, seed: int | None = None,
                 fresh: bool = False, on_done: Callable[[CohortRow], None] | None = None) -> None:
        self.files = files
        self.options = options if seed is None else dataclasses.replace(options, seed=seed)
        self.seed = seed
        self.jobs = max(1, min(jobs, len(files)))
        self.root = root
        self.fresh = fresh
        self.on_done = on_done
        self.rows: list[CohortRow | None] = [None] * len(files)
        self.todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        self.sessions: list[TrackedSession] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.worker_starts = 0
        self.process_groups: list[int] = []  # every worker's group, for checking none outlives the run
        self.placeholder = Path()  # an empty file each new worker starts on, made by run()

    def run(self) -> list[CohortRow]:
        for index in range(len(self.files)):
            self.todo.put(index)
        threads = [threading.Thread(target=self._job, daemon=True) for _ in range(self.jobs)]
        scratch = tempfile.TemporaryDirectory(prefix="quizprep-cohort-")
        self.placeholder = Path(scratch.name) / "placeholder.py"
        self.placeholder.write_text("", encoding="utf-8")
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                while thread.is_alive():
                    thread.join(timeout=0.2)  # short waits: Ctrl+C reaches the main thread
        finally:
            self.stopping.set()
            self._close_all()
            deadline = time.monotonic() + STOP_WAIT_SECONDS
            for thread in threads:
                thread.join(timeout=max(0.0, deadline - time.monotonic()))
            self._close_all()
            scratch.cleanup()
        return [row for row in self.rows if row is not None]

    def _close_all(self) -> None:
        with self.lock:
            for session in self.sessions:
                session.close()

    def _job(self) -> None:
        session: TrackedSession | None = None
        try:
            while not self.stopping.is_set():
                try:
                    index = self.todo.get_nowait()
                except queue.Empty:
                    return
                if session is None:
                    session = self._new_session()
                row = self._grade_one(self.files[index], session)
                self.rows[index] = row
                if self.on_done is not None:
                    self.on_done(row)
                if self.fresh or not session.reusable():
                    self._retire(session)
                    session = None
        finally:
            if session is not None:
                self._retire(session)

    def _new_session(self) -> TrackedSession:
        from quizprep.grader.exercises import load_spec

        assert self.options.exercise is not None
        session = TrackedSession(self.placeholder, forbidden=load_spec(self.options.exercise).forbidden,
                                 limits=self.options.limits, stopping=self.stopping)
        with self.lock:
            self.sessions.append(session)
        session.warm_up()
        return session

    def _retire(self, session: TrackedSession) -> None:
        session.close()
        with self.lock:
            self.worker_starts += session.starts
            self.process_groups += session.process_groups
            self.sessions.remove(session)

    def _grade_one(self, path: Path, session: TrackedSession) -> CohortRow:
        name = str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path)
        started = time.monotonic()
        options = self.options if self.seed is not None else \
            dataclasses.replace(self.options, seed=secrets.randbits(31))  # each file its own secret inputs
        try:
            report = grade(path, options, session)
        except Exception as error:  # noqa: BLE001 - one file the grader cannot handle must not stop the class
            if self.stopping.is_set():
                raise
            session.close()  # whatever state it is in, the next file gets a fresh worker
            return CohortRow(name, 0.0, False, [], [], time.monotonic() - started, options.seed,
                             f"{type(error).__name__}: {error}")
        return row_from(report, name, time.monotonic() - started)


def grade_folder(folder: Path, options: GradeOptions, *, jobs: int, seed: int | None = None, fresh: bool = False,
                 on_done: Callable[[CohortRow], None] | None = None) -> list[CohortRow]:
    """Every submission in `folder`, graded as exercise `options.exercise` (which must be set).
    With `seed` None, each submission's inputs come from a secret seed of its own (in its row)."""
    from quizprep.grader.exercises import load_spec

    if not options.exercise:
        raise ValueError("a folder is graded as one exercise: set options.exercise")
    load_spec(options.exercise)  # an unknown name fails here, before any worker starts
    options = dataclasses.replace(options, perf=False)
    cohort = Cohort(submissions(folder), options, jobs=jobs, root=folder, seed=seed, fresh=fresh, on_done=on_done)
    return cohort.run()


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
