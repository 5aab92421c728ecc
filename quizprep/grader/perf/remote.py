"""The grader's side of the learner's perf process: start it as a sandboxed worker, drive every case
one request at a time, and accept only replies of the expected shape.

Each batch of timed runs (one on CPU; on GPU enough to outlast a request's own cost), every run
refilled and called, is one request, bracketed by the grader's own clock: the report compares that
with the times the learner's process reports (:func:`.recheck.timing_problem`). Which rows of which
runs are re-checked, and the weights of the whole output's fingerprint, are sent only after the
batch's outputs were copied inside the worker.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any, TypeGuard

from quizprep.grader.learner_side.perf_runner import Measured, numerics_flags
from quizprep.grader.perf.measure import CaseError, measure_cases
from quizprep.grader.perf.plan import PerfError, PerfPlan
from quizprep.grader.spec import FailureKind
from quizprep.grader.failures import LearnerFailure
from quizprep.grader.worker_session import Limits, WorkerSession

LEARNER_WORKER = Path(__file__).parents[1] / "learner_side" / "perf_worker.py"
# One perf request (a setup with its memory audit, or one timed call) may take this many of the
# checks' time limits: its sizes are far larger than theirs.
CALL_LIMIT_FACTOR = 2
# The audit's fields a reply may set, with the type each must have. Not "skipped": whether a size
# runs is the grader's call, from the free memory the process reports.
_SETUP_FIELDS: dict[str, type] = {"ran": str, "peak_bytes": int, "score_tensors": int, "score_bytes": int,
                 "peak_live_bytes": int, "error": str}


class RemoteRunner:
    """A `CaseRunner` in the learner's process, seen from the grader: free_bytes, setup, run_batch,
    probe_batch. The process is sent the case's shape and each run's seed, never the plan's secret."""

    def __init__(self, session: WorkerSession, plan: PerfPlan, index: int, exercise: str, deadline: float) -> None:
        self.session, self.plan, self.index = session, plan, index
        self.exercise, self.deadline = exercise, deadline
        self.label = plan.cases[index].label

    def free_bytes(self) -> int | None:
        """The memory the learner's process has free for this case, the last case's tensors released."""
        value = self._ask({"op": "perf_free", "device": self.plan.device})
        if value.get("error"):
            raise CaseError(value["error"])
        free = value.get("free_bytes")
        if free is not None and not _is_count(free):
            raise PerfError(f"the perf worker sent back a malformed free memory for {self.label}")
        return free

    def setup(self, seed: int, result: Measured) -> None:
        value = self._ask({"op": "perf_case", "device": self.plan.device, "index": self.index,
                           "case": dataclasses.asdict(self.plan.cases[self.index]), "exercise": self.exercise,
                           "seed": seed})
        for name, kind in _SETUP_FIELDS.items():
            field = value.get(name)
            if field is not None and not (_is_count(field) if kind is int else isinstance(field, kind)):
                raise PerfError(f"the perf worker sent back a malformed {name} for {self.label}")
            if name != "error":
                setattr(result, name, field)
        if value.get("error"):
            raise CaseError(value["error"])

    def run_batch(self, seeds: list[int]) -> list[float]:
        """Refill and call for each seed, all in one request inside the grader's clock."""
        seconds = self._ask({"op": "perf_run", "seeds": seeds}).get("seconds")
        if not isinstance(seconds, list) or len(seconds) != len(seeds) or not all(_is_number(s) for s in seconds):
            raise PerfError(f"the perf worker sent back malformed times for {self.label}")
        return [float(s) for s in seconds]  # whether they can be true is judged with the report

    def probe_batch(self, asked: list[tuple[int, list[tuple[int, int, int]], int]]) -> list[tuple[list[float], float]]:
        reply = self._ask({"op": "perf_probe", "probes": [
            {"position": position, "rows": [list(row) for row in rows], "weights_seed": weights_seed}
            for position, rows, weights_seed in asked]})
        answers = reply.get("probes")
        if not isinstance(answers, list) or len(answers) != len(asked):
            raise PerfError(f"the perf worker sent back malformed output rows for {self.label}")
        return [self._probed(answer, rows) for answer, (_, rows, _) in zip(answers, asked)]

    def _probed(self, answer: Any, rows: list[tuple[int, int, int]]) -> tuple[list[float], float]:
        values = answer.get("values") if isinstance(answer, dict) else None
        mark = answer.get("fingerprint") if isinstance(answer, dict) else None
        expected = len(rows) * self.plan.cases[self.index].head_dim
        if not isinstance(values, list) or len(values) != expected or not all(_is_number(v) for v in values):
            raise PerfError(f"the perf worker sent back malformed output rows for {self.label}")
        if not _is_number(mark):
            raise PerfError(f"the perf worker sent back a malformed fingerprint for {self.label}")
        return [float(v) for v in values], float(mark)

    def _ask(self, payload: dict[str, Any]) -> dict[str, Any]:
        return ask(self.session, payload, self.deadline, f"while timing {self.label}")


def ask(session: WorkerSession, payload: dict[str, Any], deadline: float, during: str) -> dict[str, Any]:
    """One request to the learner's perf process; its reply's value, a dict. A request may take
    CALL_LIMIT_FACTOR check time limits, and never beyond the phase's deadline."""
    import torch

    left = deadline - time.monotonic()
    if left <= 0:
        raise PerfError(f"the perf run did not finish within its time limit ({during})")
    limit = min(left, CALL_LIMIT_FACTOR * session.limits.check_seconds)
    try:
        value = session.request(payload, timeout=limit)["value"]
    except LearnerFailure as failure:
        what = (f"did not finish within {limit:.0f} s (an infinite loop, or far too slow) and was stopped"
                if failure.kind == FailureKind.TIMEOUT else failure.message)
        where = f" ({failure.frames[-1]})" if failure.frames else ""
        raise PerfError(f"your code {what} {during}{where}") from None
    if not isinstance(value, dict):
        raise PerfError(f"the perf worker sent back a malformed reply {during}")
    if value.get("out_of_memory"):
        raise torch.OutOfMemoryError("out of memory")
    return value


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)  # NaN included: the re-check names it


def measure_learner(path: Path, exercise: str, plan: PerfPlan, deadline: float, forbidden: tuple[str, ...],
                    limits: Limits) -> tuple[list[Measured], list[str]]:
    """The learner's file timed in its own sandboxed worker; its measurements and the warnings
    about global switches it changed."""
    with WorkerSession(path, forbidden=forbidden, limits=limits, script=LEARNER_WORKER) as session:
        try:
            info = session.start()
        except LearnerFailure as failure:
            raise PerfError(f"your file could not be loaded for timing: {failure.message}") from None
        if info.get("forbidden"):
            calls = ", ".join(sorted({str(v.get("call")) for v in info["forbidden"]}))
            raise PerfError(f"your file was refused for timing: it uses {calls} while loading, and quizprep's own "
                            "modules and the kernels this exercise asks you to write are off limits")
        measured = measure_cases(lambda index: RemoteRunner(session, plan, index, exercise, deadline), plan, "yours")
        flags = ask(session, {"op": "perf_flags"}, deadline, "after timing")
    return measured, _flag_warnings(flags)


def _flag_warnings(flags: dict[str, Any]) -> list[str]:
    before, now = flags.get("before"), flags.get("now")
    if not isinstance(before, dict) or not isinstance(now, dict):
        return []
    return [
        f"your code changed {key} from {before.get(key)!r} to {now.get(key)!r} while it ran; its timings may "
        "not compare like for like"
        for key in numerics_flags()  # only the grader's own keys, whatever the reply holds
        if before.get(key) != now.get(key)
    ]
