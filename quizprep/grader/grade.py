"""Grading a file: pick the exercise, start the learner's process, run every check, build the report."""
from __future__ import annotations

import os
import platform
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quizprep.grader.bounds import bounded
from quizprep.grader.crashes import SHAPE_ERROR, crash_diagnosis
from quizprep.grader.device import DevicePolicy, placement, policy_for
from quizprep.grader.exercises import exercise_for, load_spec
from quizprep.grader.spec import CheckFailure, CheckResult, CheckSkipped, Diagnosis, ExerciseSpec, FailureKind, Status
from quizprep.grader.failures import LearnerFailure
from quizprep.grader.worker_session import Limits, WorkerSession

FAILURE_HINTS: dict[FailureKind, str] = {
    FailureKind.NOT_IMPLEMENTED: "Replace the `raise NotImplementedError` with your implementation.",
    FailureKind.SYNTAX: "Fix the syntax error; Python points at the line above.",
    FailureKind.TIMEOUT: "Look for a loop that never ends (or work far larger than the inputs need).",
    FailureKind.CRASH: "The process died outright: ctypes, native extensions or unsafe memory access.",
    FailureKind.EXIT: "Return your result; never exit the process from an exercise.",
    FailureKind.MEMORY: "Your code asked for more memory than the inputs need; look for a huge allocation.",
    FailureKind.FORBIDDEN: "This exercise is about writing that part yourself; basic torch operations are fine.",
    FailureKind.EXCEPTION: "Your code raised this at the line shown: check the shapes, dtypes and types there against "
                 "the contract in the exercise's docstring.",
    FailureKind.RESOURCES: "An exercise needs neither many threads nor files: compute the result and return it.",
}
FORBIDDEN_QUIZ = "sdpa-is-causal-vs-attn-mask"
NUMPY_TRACK_HINT = ("Work on the arrays you are handed with NumPy alone (@, np.swapaxes, np.exp, np.max, np.sum): "
                    "converting to torch and back is the torch exercise, not this one.")
# failures the rest of the checks would repeat
STOPPING_KINDS = (FailureKind.TIMEOUT, FailureKind.CRASH, FailureKind.EXIT, FailureKind.MEMORY, FailureKind.RESOURCES)


@dataclass
class GradeOptions:
    exercise: str | None = None
    seed: int = 0
    device: str = "auto"
    limits: Limits = field(default_factory=Limits)
    perf: bool = False
    perf_full: bool = False  # on GPU, every size of the plan rather than the default few
    only: tuple[str, ...] = ()  # run just these check ids (the tests use it)


@dataclass
class GradeReport:
    exercise: str
    title: str
    file: str
    checks: list[CheckResult]
    environment: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """Every check ran and passed; the only skips allowed are those a check declares itself
        (CheckSkipped: e.g. it needs CUDA), never a check that was not run."""
        return (all(c.status in {Status.PASS, Status.SKIP} for c in self.checks)
                and any(c.status == Status.PASS for c in self.checks))

    @property
    def score(self) -> float:
        counted = [c for c in self.checks if c.status != Status.SKIP]
        return round(sum(c.status == Status.PASS for c in counted) / len(counted), 4) if counted else 0.0


def device_policy(requested: str, spec: ExerciseSpec) -> DevicePolicy:
    """Where this grade runs the learner's code (the rules are in quizprep.grader.device); raises
    DeviceUnavailable for --device cuda without CUDA, before any worker starts."""
    return policy_for(requested, numpy_track=spec.numpy_track, gpu_kernels=spec.gpu_kernels)


def select_triton_mode(checks_device: str) -> None:
    """Triton kernels on CPU tensors run only through its interpreter, which must be chosen before
    a worker imports torch (torch's own start-up may import Triton). Workers and fork servers
    inherit the grader's environment."""
    if checks_device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    else:
        os.environ.pop("TRITON_INTERPRET", None)


def session_for(path: Path, options: GradeOptions) -> WorkerSession:
    """A worker for grading `path` (and, reused, more files of its exercise) under `options`: the
    Triton mode and the limits its checks' device needs, chosen before the worker starts."""
    spec = load_spec(exercise_for(Path(path), options.exercise))
    device = device_policy(options.device, spec).checks
    select_triton_mode(device)
    return _checks_session(path, spec, device, options.limits)


def _checks_session(path: Path, spec: ExerciseSpec, device: str, limits: Limits) -> WorkerSession:
    return WorkerSession(Path(path), forbidden=spec.forbidden, limits=limits.on(device),
                         warm_up=spec.worker_warm_up)


def grade(path: Path, options: GradeOptions, session: WorkerSession | None = None, *,
          prestarted: WorkerSession | None = None, prestarted_device: WorkerSession | None = None) -> GradeReport:
    """Run every check of the exercise on `path`. Raises UnknownExercise / FileNotFoundError early.

    With `session`, the file is loaded into that running worker, which is left running (for
    grading many files with one torch import); otherwise a fresh worker is started and stopped:
    `prestarted`, launched for `path` before the exercise was known (`quizprep grade FILE` does, to
    import torch in both processes at once), where the checks run on the CPU; `prestarted_device`,
    launched then too, for the device check's CUDA probe (left to the caller to close)."""
    path = Path(path)
    started = time.monotonic()
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    spec = load_spec(exercise_for(path, options.exercise))
    policy = device_policy(options.device, spec)
    device = policy.checks
    select_triton_mode(device)
    from quizprep.grader.context import CheckContext
    from quizprep.grader.device_check import device_check

    owned = session is None
    if session is None and prestarted is not None and device == "cpu":
        session = prestarted
        session.configure(spec.forbidden)
    elif session is None:
        session = _checks_session(path, spec, device, options.limits)
    report = GradeReport(spec.name, spec.title, str(path), [], _environment(policy, options))
    gpu_worker: WorkerSession | None = None
    deadline = started + options.limits.total_seconds
    try:
        exit_on_termination_signals()
        if "cuda" in policy.probes and device == "cpu" and (not options.only or "device" in options.only):
            # The device check's CUDA worker imports torch and creates its context (seconds) while
            # the checks run on the CPU, instead of after them.
            if prestarted_device is not None:
                gpu_worker = prestarted_device
                gpu_worker.configure(spec.forbidden)
            else:
                gpu_worker = _gpu_session(session, path, spec.forbidden)
                gpu_worker.launch()
        ctx = CheckContext(session, seed=options.seed, device=device, every_call=spec.every_call)
        load = _load_check(session, spec, path, owned)
        report.checks.append(load)
        if load.status != Status.PASS:
            report.checks += [CheckResult(c.id, c.title, Status.SKIP, "your file did not load") for c in spec.checks]
            return bounded(report)
        # every request from here stops there, the device check's too (start-up has its own limit)
        session.deadline = deadline
        if gpu_worker is not None:
            gpu_worker.deadline = deadline
        _run_checks(spec, ctx, options, report, deadline)
        if _wants_device_check(policy, options, report.checks[1:]):
            result = device_check(spec, ctx, policy.probes,
                                  lambda: gpu_worker or _gpu_session(session, path, spec.forbidden),
                                  report.checks[1:])
            if time.monotonic() >= deadline:  # its probes were cut short: not a pass
                limit = f"the overall time limit ({options.limits.total_seconds:g} s) ran out"
                result = _not_run(result.id, result.title, limit, "time-limit", "")
            report.checks.append(result)
        _point_shape_errors_to_the_named_cause(report.checks)
        session.deadline = None  # the perf phase has its own budget, counted from its start
        if options.perf:
            perf_ctx = CheckContext(session, seed=options.seed, device=policy.perf, perf_full=options.perf_full)
            _run_perf(spec, perf_ctx, report)
    finally:
        session.deadline = None  # a shared worker outlives this grade
        if gpu_worker is not None:
            gpu_worker.close()
        if owned:
            session.close()
    report.environment["worker_starts"] = session.starts
    report.environment["sandbox"] = session.protections
    return bounded(report)


def exit_on_termination_signals() -> None:
    """SIGTERM and SIGHUP end the grader through its `finally` blocks, which kill the workers'
    process groups (SIGKILL needs no handler: a worker dies with its parent). Only the main
    thread may install handlers; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        return
    for number in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(number) in (signal.SIG_DFL, None):
            signal.signal(number, _raise_exit)


def _raise_exit(number: int, frame: Any) -> None:
    raise SystemExit(128 + number)


def _run_checks(spec: ExerciseSpec, ctx: Any, options: GradeOptions, report: GradeReport, deadline: float) -> None:
    """Every check in order. Once the learner's code hangs, or crashes (ends the process, runs out
    of memory) a second time, the rest would meet the same fate one time limit or one torch
    re-import at a time: they are marked with that cause at once, which keeps a broken file's
    verdict within seconds. One crash is forgiven: code may crash on one dtype only. `deadline`
    counts from the grade's start, the worker's start-up included; `grade` holds every request of
    the worker to it (WorkerSession.deadline), not only the next check."""
    _run_each(spec, ctx, options, report, deadline)


def _run_each(spec: ExerciseSpec, ctx: Any, options: GradeOptions, report: GradeReport, deadline: float) -> None:
    stopped: CheckResult | None = None
    crashes = 0
    for check in spec.checks:
        if options.only and check.id not in options.only:
            continue
        if time.monotonic() > deadline:
            limit = f"the overall time limit ({options.limits.total_seconds:g} s) ran out"
            report.checks.append(_not_run(check.id, check.title, limit, "time-limit", ""))
        elif stopped is not None:
            report.checks.append(_not_run(check.id, check.title, f"{stopped.message} (in {stopped.id})",
                                          stopped.cause, stopped.hint, stopped.failure_kind))
        else:
            result = run_check(check.id, check.title, check.run, ctx, spec)
            if ctx.device != "cpu" and _placement_failure(result):
                # The device check names the placement bug; the verdict and its name are the CPU's.
                from quizprep.grader.context import CheckContext

                cpu = CheckContext(ctx.session, seed=ctx.seed, device="cpu", every_call=spec.every_call)
                result = run_check(check.id, check.title, check.run, cpu, spec)
            report.checks.append(result)
            crashes += result.failure_kind in STOPPING_KINDS
            if result.failure_kind == FailureKind.TIMEOUT or crashes >= 2:
                stopped = result


def _wants_device_check(policy: DevicePolicy, options: GradeOptions, checks: list[CheckResult]) -> bool:
    """Asked for, and the code works somewhere: code that fails every check has nothing to place."""
    asked = bool(policy.probes) and (not options.only or "device" in options.only)
    return asked and (not checks or any(c.status == Status.PASS for c in checks))


def _placement_failure(result: CheckResult) -> bool:
    return result.status == Status.FAIL and placement(result.message, result.failing_code) is not None


def _gpu_session(checks: WorkerSession, path: Path, forbidden: tuple[str, ...]) -> WorkerSession:
    """A worker for the device check on CUDA, beside the checks' own CPU one (`path` itself: a
    reused checks worker may still hold the previous file): a CUDA context reserves tens of GiB of
    address space, so it runs without RLIMIT_AS (CUDA's own out-of-memory errors and the
    per-process GPU memory share bound it)."""
    session = WorkerSession(path, forbidden=forbidden, limits=checks.limits.on("cuda"),
                            fork_server=checks.fork_server)
    session.deadline = checks.deadline
    return session


def _not_run(check_id: str, title: str, why: str, cause: str, hint: str,
             failure_kind: FailureKind | None = None) -> CheckResult:
    """A check that was not run fails: only a check that ran and passed counts."""
    return CheckResult(check_id, title, Status.FAIL, f"not run: {why}", hint=hint, cause=cause,
                       failure_kind=failure_kind)


def _point_shape_errors_to_the_named_cause(checks: list[CheckResult]) -> None:
    """A shape error next to one named mistake is most often that mistake's consequence (attending
    over the wrong sequence gives scores of the wrong shape): say so instead of a generic hint."""
    named = [c for c in checks if c.status == Status.FAIL and c.diagnosis_id]
    if len({c.diagnosis_id for c in named}) != 1:
        return
    first = named[0]
    for check in checks:
        if check.status == Status.FAIL and not check.diagnosis_id and SHAPE_ERROR.search(check.message):
            check.hint = (f"Probably a consequence of the mistake named in {first.id} ({first.diagnosis}): "
                          f"fix that first. {check.hint}")
            check.quiz = check.quiz or first.quiz


def _load_check(session: WorkerSession, spec: ExerciseSpec, path: Path, fresh: bool) -> CheckResult:
    title = f"file loads and defines {', '.join(spec.entry_points)}"
    started = time.monotonic()
    try:
        if fresh and session.launched_at is None:
            session.launch()
        info = session.start() if fresh else session.switch(path, spec.forbidden)
    except LearnerFailure as failure:
        return _failed("load", title, failure, started)
    missing = [name for name in spec.entry_points if name not in info.get("names", [])]
    if missing:
        return CheckResult("load", title, Status.FAIL, f"your file does not define {', '.join(missing)}",
                           hint="Keep the names from the stub: the grader calls them by name.")
    return CheckResult("load", title, Status.PASS, seconds=time.monotonic() - started)


def run_check(check_id: str, title: str, body: Any, ctx: Any, spec: ExerciseSpec | None = None) -> CheckResult:
    calls = getattr(ctx, "call_log", None)  # a stand-in context (tests) keeps no log
    if calls is not None:
        calls.clear()
    result = _outcome(check_id, title, body, ctx, spec)
    if calls is not None:
        result.test_code, result.targets = calls.test_code(), list(calls.targets)
    return result


def _outcome(check_id: str, title: str, body: Any, ctx: Any, spec: ExerciseSpec | None) -> CheckResult:
    started = time.monotonic()
    try:
        note = body(ctx)
    except CheckFailure as failure:
        return CheckResult(check_id, title, Status.FAIL, failure.message, failure.diagnosis, failure.hint, failure.quiz,
                           failure.tried, failure.smallest, failure.located(), failure.traceback, failure.output,
                           time.monotonic() - started, failure.diagnosis_id, failure.diagnosis_id,
                           mismatches=failure.mismatches)
    except LearnerFailure as failure:
        source = getattr(getattr(ctx, "session", None), "path", None)
        return _failed(check_id, title, failure, started, spec, source if isinstance(source, Path) else None)
    except CheckSkipped as skipped:
        return CheckResult(check_id, title, Status.SKIP, str(skipped))
    except Exception as error:  # noqa: BLE001 - a grader bug must not hide the other checks
        detail = "".join(traceback.format_exception_only(type(error), error)).strip()
        return CheckResult(check_id, title, Status.ERROR, f"internal grader error: {detail}",
                           hint="This is a bug in quizprep, not in your code; please report it.",
                           seconds=time.monotonic() - started)
    return CheckResult(check_id, title, Status.PASS, note or "", seconds=time.monotonic() - started)


def _failed(check_id: str, title: str, failure: LearnerFailure, started: float,
            spec: ExerciseSpec | None = None, source: Path | None = None) -> CheckResult:
    frames = [str(frame) for frame in failure.frames]
    where = f"{failure.kind} at {frames[-1]}" if frames else f"{failure.kind}: {failure.message}"
    raised = failure.kind == FailureKind.EXCEPTION
    cause = crash_diagnosis(failure.message, failure.frames, spec.mask_layout if spec else "", source=source,
                            own_rules=spec.crash_causes if spec else ()) if raised else None
    if cause is None and failure.kind == FailureKind.FORBIDDEN and spec is not None and spec.numpy_track:
        cause = Diagnosis("", "", NUMPY_TRACK_HINT, "")
    if cause is None:
        cause = Diagnosis("", "", FAILURE_HINTS.get(failure.kind, ""),
                          FORBIDDEN_QUIZ if failure.kind == FailureKind.FORBIDDEN else "")
    return CheckResult(
        check_id, title, Status.FAIL, failure.message,
        diagnosis=cause.title,
        hint=cause.hint,
        quiz=cause.quiz,
        traceback=frames,
        output=failure.output,
        seconds=time.monotonic() - started,
        diagnosis_id=cause.id,
        cause=cause.id or where,
        failure_kind=failure.kind,
        failing_code=failure.frames[-1].code if failure.frames else "",
    )


def _run_perf(spec: ExerciseSpec, ctx: Any, report: GradeReport) -> None:
    if spec.perf is None:
        report.checks.append(CheckResult("perf", "performance", Status.SKIP, "this exercise has no perf phase"))
        return
    if not report.passed:
        report.checks.append(CheckResult("perf", "performance", Status.SKIP, "perf runs once every check passes"))
        return
    result = spec.perf(ctx)
    report.checks += result.checks
    report.extra["perf"] = result.data


def _environment(policy: DevicePolicy, options: GradeOptions) -> dict[str, Any]:
    import torch

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
        "device": policy.checks,
        "device_policy": policy.to_dict(),
        "seed": options.seed,
        "executable": sys.executable,
        "limits": {
            "check_seconds": options.limits.check_seconds,
            "total_seconds": options.limits.total_seconds,
            "memory_bytes": options.limits.memory_bytes,
        },
    }
