"""How the learner's process failed, in words: a :class:`LearnerFailure` made from what the worker
replied (an exception, a forbidden call, a syntax error) or from how its process ended (a signal,
an exit status). Data in, data out: the session (worker_session.py) reads the pipes and the process.
"""
from __future__ import annotations

import signal
from dataclasses import dataclass, field
from typing import Any

from quizprep.grader.output import Frame, frames_from_dump, strip_dump
from quizprep.grader.spec import FailureKind

SIGNAL_REASONS = {
    "SIGSEGV": "crashed with a segmentation fault (SIGSEGV): invalid memory access",
    "SIGKILL": "was killed (SIGKILL), most likely by the system for using too much memory",
    "SIGABRT": "aborted (SIGABRT)",
    "SIGBUS": "crashed with a bus error (SIGBUS)",
    # native_traps.py fills the forbidden kernels' code with ud2: native routes end here.
    "SIGILL": ("stopped at an illegal instruction (SIGILL), which is what the machine code of "
               "a forbidden kernel is replaced by (reached natively: ctypes, a reset guard?)"),
}


@dataclass
class LearnerFailure(Exception):
    """The learner's code did not produce a result; `kind` says why."""

    kind: FailureKind
    message: str
    frames: list[Frame] = field(default_factory=list)
    output: str = ""
    forbidden: list[dict[str, Any]] = field(default_factory=list)
    raised_by_learner: bool = False  # by a raise or assert statement in the learner's file

    def __str__(self) -> str:
        return self.message



def ended(status: int | None, event: dict[str, Any], output: str, during: str, learner_path: str) -> LearnerFailure:
    """The process ended without a reply: `status` as Popen reports it (negative: a signal), `event`
    the last thing it said (an os._exit), `output` what it printed meanwhile."""
    if event.get("event") == "os_exit":
        frames = [Frame(**f) for f in event.get("frames", [])]
        return LearnerFailure(FailureKind.EXIT, f"your code ended the process with os._exit({event.get('status')}) "
                                                f"while {during}", frames, output)
    if status is not None and status < 0:
        name = _signal_name(-status)
        reason = SIGNAL_REASONS.get(name, f"was terminated by signal {name}")
        return LearnerFailure(FailureKind.CRASH, f"the process running your code {reason} while {during}",
                              frames_from_dump(output, learner_path)[-3:], strip_dump(output))
    return LearnerFailure(FailureKind.EXIT, f"the process running your code exited (status {status}) while {during}",
                          [], output)


ON_NUMPY_TRACK = " on the NumPy track"  # the label of a torch call refused there (guards.Guards.numpy_only)


def failure_from(error: dict[str, Any], forbidden: list[dict[str, Any]], output: str,
                 learner_path: str) -> LearnerFailure:
    """The worker's reply that the learner's code failed: `error` as the worker described it, and
    the forbidden calls it made, if any."""
    frames = [Frame(**f) for f in error.get("frames", [])]
    kind = FailureKind.FORBIDDEN if forbidden else FailureKind.from_worker(error.get("kind"))
    message = _plain_message(kind, error)
    if forbidden:
        calls = sorted({v["call"] for v in forbidden})
        frames = [Frame(**f) for v in forbidden for f in v.get("frames", [])] or frames
        if any(c.startswith("import ") for c in calls):
            message = "tries to " + ", ".join(calls) + ": quizprep's own modules (the reference) are off limits"
        elif all(c.endswith(ON_NUMPY_TRACK) for c in calls):
            message = "uses " + ", ".join(calls) + ", which is NumPy only: torch is the other track's"
        else:
            message = "uses " + ", ".join(calls) + ", which this exercise asks you to write yourself"
    syntax = error.get("syntax")
    if syntax:
        frames = [Frame(syntax.get("file") or learner_path, syntax.get("line") or 0, "<module>",
                        (syntax.get("text") or "").strip())]
    return LearnerFailure(kind, message, frames, output, forbidden, raised_by_learner=bool(error.get("raised_here")))


def _plain_message(kind: FailureKind, error: dict[str, Any]) -> str:
    detail = error.get("message", "")
    if kind == FailureKind.NOT_IMPLEMENTED:
        return "not implemented yet (raises NotImplementedError)"
    if kind == FailureKind.SYNTAX:
        syntax = error.get("syntax", {})
        return f"your file has a syntax error: {syntax.get('msg', detail)} (line {syntax.get('line')})"
    if kind == FailureKind.EXIT:
        return f"your code called sys.exit({detail}); return the result instead"
    if kind == FailureKind.MEMORY:
        return f"ran out of memory ({error.get('type')}: {detail})"
    return f"raised {error.get('type', 'an exception')}: {detail}" if detail else f"raised {error.get('type')}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
