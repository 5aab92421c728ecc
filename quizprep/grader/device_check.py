"""The ``device`` check: the learner's code run again with its inputs on another device (see
:mod:`quizprep.grader.device` for the policy), failing only for a device-placement bug."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from quizprep.grader.context import CheckContext, Reply
from quizprep.grader.device import DID_NOT_FINISH, HOST_VALUES, NUMPY, REFUSES_DEVICE, placement
from quizprep.grader.spec import CheckResult, Diagnosis, ExerciseSpec, FailureKind, Status
from quizprep.grader.failures import LearnerFailure
from quizprep.grader.learner_side.guards import PYTHON_VALUES
from quizprep.grader.output import Frame
from quizprep.grader.worker_session import WorkerSession

TITLE = "device placement: runs with its inputs on another device"
# Each check's first calls cover the path it tests (causal, masked, a dtype); the rest repeat it.
CALLS_PER_CHECK = 2
# A probe run that hangs or crashes on the CPU too says nothing of placement: the checks named it.
# One that the CPU's checks never met did not finish on the other device, which is no pass.
_ENDS_PROBE = (FailureKind.TIMEOUT, FailureKind.CRASH, FailureKind.EXIT, FailureKind.MEMORY)
UNFINISHED_HINT = ("The checks on the CPU finished in time. Grade it again on a less busy machine; if it stops "
                   "here again, look for a wait or a loop that depends on where the inputs are.")


@dataclass(frozen=True)
class Found:
    device: str
    failure: LearnerFailure
    bug: Diagnosis


class _Enough(Exception):
    """A check's first calls are in: the rest of it would only judge outputs a probe ignores."""


class ProbeContext(CheckContext):
    """A CheckContext that ends its check after CALLS_PER_CHECK calls of the learner's code."""

    def __init__(self, session: WorkerSession, *, seed: int, device: str) -> None:
        super().__init__(session, seed=seed, device=device)
        self.calls = 0

    def _send(self, request: dict[str, Any], options: dict[str, Any] | None) -> Reply:
        reply = super()._send(request, options)
        self.calls += 1
        if self.calls >= CALLS_PER_CHECK:
            raise _Enough
        return reply


def probe(spec: ExerciseSpec, session: WorkerSession, seed: int, device: str,
          met_on_cpu: frozenset[FailureKind] = frozenset()) -> Found | None:
    """Each check's first calls once more on `device`, until one raises for a placement bug or the
    code does not finish in a way (`_ENDS_PROBE`) that the CPU's checks did not meet (`met_on_cpu`).
    The checks cannot judge outputs without values (meta), so their own verdicts are ignored here."""
    for check in (check for check in spec.checks if check.probed):
        try:
            check.run(ProbeContext(session, seed=seed, device=device))
        except LearnerFailure as failure:
            frame = failure.frames[-1] if failure.frames else None
            bug = placement(failure.message, frame.code if frame else "")
            if bug is None and failure.raised_by_learner and failure.kind == FailureKind.EXCEPTION:
                bug = REFUSES_DEVICE  # an `assert q.device.type == "cpu"` passed the probe (seventh red team)
            if bug is not None:
                return Found(device, failure, bug)
            if failure.kind in _ENDS_PROBE:
                return None if failure.kind in met_on_cpu else Found(device, failure, DID_NOT_FINISH)
        except Exception:  # noqa: BLE001 - a check meeting outputs without values, which is expected
            continue
    return None


def device_check(spec: ExerciseSpec, ctx: CheckContext, probes: tuple[str, ...],
                 gpu_session: Callable[[], WorkerSession], checks: list[CheckResult]) -> CheckResult:
    """Probe each device in turn (meta in the checks' worker; CUDA in the checks' worker when the
    checks run there, else in one of its own from `gpu_session`), after the CPU's `checks`."""
    started = time.monotonic()
    if ctx.session.host_copies and not spec.numpy_track:
        return _read_out_of_torch(ctx.session.host_copies[0], time.monotonic() - started)
    met_on_cpu = frozenset(check.failure_kind for check in checks if check.failure_kind is not None)
    for device in probes:
        found = _probe_on(spec, ctx, device, gpu_session, met_on_cpu)
        if found is not None:
            return _failed(found, time.monotonic() - started)
    return CheckResult("device", TITLE, Status.PASS, f"no tensor left behind with inputs on {' and '.join(probes)}",
                       seconds=time.monotonic() - started)


def _probe_on(spec: ExerciseSpec, ctx: CheckContext, device: str,
              gpu_session: Callable[[], WorkerSession], met_on_cpu: frozenset[FailureKind]) -> Found | None:
    if device != "cuda" or ctx.device == "cuda":
        return probe(spec, ctx.session, ctx.seed, device, met_on_cpu)
    session = gpu_session()
    try:
        session.start()
        return probe(spec, session, ctx.seed, device, met_on_cpu)
    except LearnerFailure as failure:  # the file itself, at import on this machine
        frame = failure.frames[-1] if failure.frames else None
        bug = placement(failure.message, frame.code if frame else "")
        return Found(device, failure, bug) if bug else None
    finally:
        session.close()


def _read_out_of_torch(copy: dict[str, Any], seconds: float) -> CheckResult:
    """A tensor read into NumPy (on a GPU that line raises) or its values into Python during the CPU's
    checks, whatever the code does with the meta inputs of the probe (it may tell them apart)."""
    frames = [str(Frame(**frame)) for frame in copy["frames"]]
    where = frames[-1] if frames else ""
    bug = HOST_VALUES if copy["call"] == PYTHON_VALUES else NUMPY
    return CheckResult("device", TITLE, Status.FAIL, f"with inputs on the CPU your code read a tensor out of torch "
                       f"({copy['call']}), which does not stay on a GPU", diagnosis=bug.title, hint=bug.hint,
                       where=where, traceback=frames, seconds=seconds, diagnosis_id=bug.id, cause=bug.id)


def _failed(found: Found, seconds: float) -> CheckResult:
    if found.failure.kind == FailureKind.TIMEOUT:
        # Slow code on a busy machine meets this as a hang does: not a pass, and no bug named.
        return CheckResult("device", TITLE, Status.FAIL,
                           f"not run to the end: with inputs on {found.device}, {found.failure.message}",
                           hint=UNFINISHED_HINT, cause="time-limit", failure_kind=FailureKind.TIMEOUT,
                           output=found.failure.output, seconds=seconds)
    frames = [str(frame) for frame in found.failure.frames]
    where = frames[-1] if frames else ""
    return CheckResult(
        "device", TITLE, Status.FAIL, f"with inputs on {found.device}: {found.failure.message}",
        diagnosis=found.bug.title, hint=found.bug.hint, quiz=found.bug.quiz, where=where, traceback=frames,
        output=found.failure.output, seconds=seconds, diagnosis_id=found.bug.id, cause=found.bug.id,
    )
