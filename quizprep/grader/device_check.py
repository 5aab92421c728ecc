"""The ``device`` check: the learner's code run again with its inputs on another device (see
:mod:`quizprep.grader.device` for the policy), failing only for a device-placement bug."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from quizprep.grader.context import CheckContext
from quizprep.grader.device import Placement, placement
from quizprep.grader.session import LearnerFailure, WorkerSession
from quizprep.grader.spec import CheckResult, ExerciseSpec

TITLE = "device placement: runs with its inputs on another device"
# A probe run that hangs or crashes says nothing of placement, and the checks have named it already.
_ENDS_PROBE = ("timeout", "crash", "exit", "memory")


@dataclass(frozen=True)
class Found:
    device: str
    failure: LearnerFailure
    bug: Placement


def probe(spec: ExerciseSpec, ctx: CheckContext) -> Found | None:
    """Every check's calls once more on `ctx.device`, until one raises for a placement bug. The
    checks cannot judge outputs without values (meta), so their own verdicts are ignored here."""
    for check in spec.checks:
        try:
            check.run(ctx)
        except LearnerFailure as failure:
            frame = failure.frames[-1] if failure.frames else None
            bug = placement(failure.message, frame.code if frame else "")
            if bug is not None:
                return Found(ctx.device, failure, bug)
            if failure.kind in _ENDS_PROBE:
                return None
        except Exception:  # noqa: BLE001 - a check meeting outputs without values, which is expected
            continue
    return None


def device_check(spec: ExerciseSpec, ctx: CheckContext, probes: tuple[str, ...],
                 gpu_session: Callable[[], WorkerSession]) -> CheckResult:
    """Probe each device in turn (meta in the checks' worker; CUDA in the checks' worker when the
    checks run there, else in one of its own from `gpu_session`)."""
    started = time.monotonic()
    for device in probes:
        found = _probe_on(spec, ctx, device, gpu_session)
        if found is not None:
            return _failed(found, time.monotonic() - started)
    return CheckResult("device", TITLE, "pass", f"no tensor left behind with inputs on {' and '.join(probes)}",
                       seconds=time.monotonic() - started)


def _probe_on(spec: ExerciseSpec, ctx: CheckContext, device: str,
              gpu_session: Callable[[], WorkerSession]) -> Found | None:
    if device != "cuda" or ctx.device == "cuda":
        return probe(spec, CheckContext(ctx.session, seed=ctx.seed, device=device))
    session = gpu_session()
    try:
        session.start()
        return probe(spec, CheckContext(session, seed=ctx.seed, device=device))
    except LearnerFailure as failure:  # the file itself, at import on this machine
        frame = failure.frames[-1] if failure.frames else None
        bug = placement(failure.message, frame.code if frame else "")
        return Found(device, failure, bug) if bug else None
    finally:
        session.close()


def _failed(found: Found, seconds: float) -> CheckResult:
    frames = [str(frame) for frame in found.failure.frames]
    where = frames[-1] if frames else ""
    return CheckResult(
        "device", TITLE, "fail", f"with inputs on {found.device}: {found.failure.message}",
        diagnosis=found.bug.diagnosis, hint=found.bug.hint, where=where, traceback=frames,
        output=found.failure.output, seconds=seconds, diagnosis_id=found.bug.id, cause=found.bug.id,
    )
