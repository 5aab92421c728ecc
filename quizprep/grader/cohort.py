"""Grading a class: every submission in a folder, several at once, one verdict row each.

Each job is a thread of the grader that drives its own worker processes (the learner's code and
its torch work run there, so threads in the grader are enough to keep N cores busy). A job starts
one fork server (forkserver.py), which imports torch once; every submission then runs in a worker
forked from it, which ends with the submission's verdict. No process that learner code ran in is
ever reused, so a submission that monkeypatches torch, changes the default dtype, leaves a thread
running or ends its process cannot change another submission's verdict, and torch is still
imported once per job, not once per file. With ``fresh=True``, where the server cannot start, or where
the worker is jailed (grader/jail/: a server's children would share its namespaces)
each submission gets a whole new interpreter instead.
"""
from __future__ import annotations

import dataclasses
import os
import queue
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from quizprep.grader.bounds import encodable
from quizprep.grader.jail import launch as jail_launch
from quizprep.grader.learner_side.forkserver import ForkServer, ForkServerError
from quizprep.grader.grade import GradeOptions, GradeReport, grade
from quizprep.grader.source_scan import reaches_around
from quizprep.grader.submission_file import source_text
from quizprep.grader.spec import Status
from quizprep.grader.failures import LearnerFailure
from quizprep.grader.worker_session import WorkerSession

STOP_WAIT_SECONDS = 10.0  # for jobs to close their workers once the run is stopped
SCAN_BYTES = 1 << 20  # of a submission's source, for source_scan


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
    read_this: list[str] = field(default_factory=list)  # routes its source names (source_scan)

    def summary(self) -> dict[str, Any]:
        return {"file": self.file, "score": self.score, "passed": self.passed, "failed": self.failed,
                "diagnoses": self.diagnoses, "seconds": round(self.seconds, 3), "seed": self.seed, "error": self.error,
                "read_this": self.read_this}


def submissions(folder: Path) -> list[Path]:
    """The Python files directly in `folder`, sorted by name (a package marker is not a submission)."""
    return sorted(p for p in folder.glob("*.py") if p.is_file() and p.name != "__init__.py")


def row_from(report: GradeReport, file: str, seconds: float, source: Path) -> CohortRow:
    failed = [c.id for c in report.checks if c.status in {Status.FAIL, Status.ERROR}]
    diagnoses = list(dict.fromkeys(c.diagnosis_id for c in report.checks if c.diagnosis_id))
    return CohortRow(file, report.score, report.passed, failed, diagnoses, seconds,
                     report.environment.get("seed"), report=report, read_this=_scan(source, report.exercise))


def _scan(path: Path, exercise: str) -> list[str]:
    from quizprep.grader.exercises import UnknownExercise, load_spec

    try:
        spec = load_spec(exercise)
    except UnknownExercise:
        return reaches_around(source_text(path, SCAN_BYTES))
    return reaches_around(source_text(path, SCAN_BYTES), spec.entry_points if spec.gpu_kernels else ())


class TrackedSession(WorkerSession):
    """A worker session that refuses to start once the run was stopped."""

    def __init__(self, *args: Any, stopping: threading.Event, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.stopping = stopping

    def start(self) -> dict[str, Any]:
        if self.stopping.is_set():  # a check restarting its worker after the run was stopped
            raise RuntimeError("grading was stopped")
        return super().start()


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
        self.server_starts = 0
        self.servers: list[ForkServer] = []
        self.process_groups: list[int] = []  # every worker's group, for checking none outlives the run
        self.forbidden: tuple[str, ...] = ()
        self.limits = options.limits

    def run(self) -> list[CohortRow]:
        from quizprep.grader.exercises import load_spec
        from quizprep.grader.grade import device_policy, select_triton_mode

        assert self.options.exercise is not None
        spec = load_spec(self.options.exercise)
        self.forbidden = spec.forbidden  # every worker guards these
        checks = device_policy(self.options.device, spec).checks
        self.limits = self.options.limits.on(checks)
        # before any fork server imports torch (and with it, maybe Triton)
        select_triton_mode(checks)
        for index in range(len(self.files)):
            self.todo.put(index)
        # Waited for through events, not Thread.join: in Python 3.11 a join that Ctrl+C interrupts
        # marks its thread as ended though it still runs, and a later join returns at once.
        ended = [threading.Event() for _ in range(self.jobs)]
        threads = [threading.Thread(target=self._job, args=(event,), daemon=True) for event in ended]
        try:
            for thread in threads:
                thread.start()
            for event in ended:
                while not event.wait(timeout=0.2):  # short waits: Ctrl+C reaches the main thread
                    pass
        finally:
            self.stopping.set()
            self._kill_running(servers=False)  # each job then closes its server, which reaps its workers
            deadline = time.monotonic() + STOP_WAIT_SECONDS
            for event in ended:
                event.wait(timeout=max(0.0, deadline - time.monotonic()))
            self._kill_running(servers=True)  # what jobs still running started meanwhile
        return [row for row in self.rows if row is not None]

    def _kill_running(self, *, servers: bool) -> None:
        """Kill the workers (and `servers`) still running. Only kill: each job's thread closes
        its own pipes and sockets, which it may be using at this moment."""
        with self.lock:
            for session in self.sessions:
                session.kill()
            for server in self.servers if servers else ():
                server.kill()

    def _job(self, ended: threading.Event) -> None:
        try:
            self._grade_queued()
        finally:
            ended.set()

    def _grade_queued(self) -> None:
        server = self._start_server()
        ahead: tuple[int, TrackedSession] | None = None
        try:
            while not self.stopping.is_set():
                if ahead is not None:
                    (index, session), ahead = ahead, None
                else:
                    try:
                        index = self.todo.get_nowait()
                    except queue.Empty:
                        return
                    session = self._new_session(server, self.files[index])
                if server is None:
                    ahead = self._launch_next()  # its torch import runs while this file is graded
                try:
                    row = self._grade_one(self.files[index], session)
                finally:
                    self._retire(session)
                self.rows[index] = row
                if self.on_done is not None:
                    self.on_done(row)
        finally:
            if ahead is not None:
                self._retire(ahead[1])
            if server is not None:
                with self.lock:
                    self.servers.remove(server)
                server.close()

    def _start_server(self) -> ForkServer | None:
        if self.fresh or not jail_launch.refused():
            return None  # jailed: each submission in namespaces of its own, which a shared server's children are not
        try:
            limits = self.options.limits
            server = ForkServer(threads=limits.threads, startup_seconds=limits.startup_seconds)
        except ForkServerError:
            return None  # each submission then gets a new interpreter
        with self.lock:
            self.servers.append(server)
            self.server_starts += 1
            self.process_groups.append(server.process.pid)
        return server

    def _launch_next(self) -> tuple[int, TrackedSession] | None:
        """Without a fork server each file starts an interpreter: the next file's, launched now."""
        try:
            index = self.todo.get_nowait()
        except queue.Empty:
            return None
        session = self._new_session(None, self.files[index])
        try:
            session.launch()
        except LearnerFailure:
            pass  # its file could not be copied: its own grade says so
        return index, session

    def _new_session(self, server: ForkServer | None, path: Path) -> TrackedSession:
        session = TrackedSession(path, forbidden=self.forbidden, limits=self.limits, stopping=self.stopping,
                                 fork_server=server)
        with self.lock:
            self.sessions.append(session)
        return session

    def _retire(self, session: TrackedSession) -> None:
        session.close()
        with self.lock:
            self.worker_starts += session.starts
            self.process_groups += session.process_groups
            self.sessions.remove(session)

    def _grade_one(self, path: Path, session: TrackedSession) -> CohortRow:
        # shown, never opened: a non-UTF-8 byte in a file name would stop the CSV, the JSON and the report
        name = encodable(str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path))
        if path.is_symlink():
            # the grader may run as root: followed, a link out of the folder would show another user's
            # file, and a link to a classmate's file would pass as this learner's own work
            inside = path.resolve().is_relative_to(self.root.resolve())
            target = (f"to {path.resolve().name}, another file of the class" if inside
                      else "to a file outside the class folder")
            return CohortRow(name, 0.0, False, [], [], 0.0, None,
                             f"not graded: a symbolic link {target} (each submission must be a file of its own)")
        started = time.monotonic()
        options = self.options if self.seed is not None else \
            dataclasses.replace(self.options, seed=secrets.randbits(31))  # each file its own secret inputs
        try:
            report = grade(path, options, session)
        except Exception as error:  # noqa: BLE001 - one file the grader cannot handle must not stop the class
            if self.stopping.is_set():
                raise
            return CohortRow(name, 0.0, False, [], [], time.monotonic() - started, options.seed,
                             encodable(f"{type(error).__name__}: {error}"))
        return row_from(report, name, time.monotonic() - started, path)


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
