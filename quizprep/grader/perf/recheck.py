"""Re-validation of what the learner's process reports: its timed outputs against what the clean
process computed on the same inputs (rows in float64, and a fingerprint of the whole output), and
its times against what the device can do and what the grader's own clock saw."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from quizprep.grader.learner_side.perf_clocks import L2_FLUSH_BYTES
from quizprep.grader.learner_side.perf_runner import Measured
from quizprep.grader.perf.plan import PROBE_TOLERANCE, PerfCase, PerfPlan

# A row's re-check: one of these two words, or the sentence that says what differs.
RECHECK_OK = "ok"
NOT_RUN = "not run"


# A median the learner's process reports this much below the grader's own clock around the same
# runs (per run: a request holds a batch of runs on GPU) means its clock was changed. Between the
# two clocks sit, per request, a pipe round trip and the wait for a turn on a loaded machine
# (BRACKET_SLACK_SECONDS), and per run the refill of the inputs, a copy of the output and its
# fingerprint (and on GPU the L2 flush), allowed at a rate below what a device does (on one core
# of the loaded 2-core VM, normal_ fills 0.45-0.8 GB/s).
# Why these figures, on CPU: the waits are per request, not proportional to the call, so they are
# an allowance, and the factor only covers the spread of the call itself. Measured 2026-11-26 on
# the 2-core VM at load average 4.9-7.0 (other sessions' work, and two CPU burners for 6 of
# them), honest code, 8 grades (the default plan and the tests' n=128 plan, 36 rows): with 5 ms a request and a factor
# of 2 an honest n=128 row needed 3.8 and was rejected, while a clock claiming honest/2.05 passed
# (test_perf_hostile.py, calls of 0.2 s); with 7.5 ms the most any honest row needed was 1.04, so 1.5 leaves a margin of
# 1.44, and a clock claiming more than 1.5x (beyond the allowance) is caught. GPU keeps 2.0 and
# 5 ms: its batches' one-time costs were measured on one H200 run only (benchmarks/README.md).
BRACKET_FACTOR = {"cpu": 1.5, "cuda": 2.0}
BRACKET_SLACK_SECONDS = {"cpu": 7.5e-3, "cuda": 5e-3}  # per request
BRACKET_BYTES_PER_SECOND = {"cpu": 2.5e8, "cuda": 2e11}
BRACKET_ROUNDING = 0.01  # the two clocks read the same counter; this only absorbs rounding
# On GPU, per run: the L2 flush (zeroing L2_FLUSH_BYTES) at a rate every current data-centre and
# desktop GPU beats, and the launches and the event synchronisation around the call.
GPU_FLUSH_BYTES_PER_SECOND = 1e12
GPU_RUN_SLACK_SECONDS = 1e-4


def check_probes(
    case: PerfCase, got: list[list[float] | None] | None, want: list[list[float] | None]
) -> str:
    """"ok", or where the timed outputs differ from the float64 probes of the same inputs.
    ``want`` has None for the runs that were not re-checked."""
    if not got:
        return NOT_RUN
    if len(got) != len(want):
        return f"{len(got)} timed outputs for {len(want)} runs"
    rtol, atol = PROBE_TOLERANCE.get(case.dtype, (1e-2, 1e-2))
    for run, (row_got, row_want) in enumerate(zip(got, want)):
        if row_want is None:
            continue
        if row_got is None or len(row_got) != len(row_want):
            return f"run {run}: output has the wrong shape"
        for position, (a, b) in enumerate(zip(row_got, row_want)):
            if not abs(a - b) <= atol + rtol * abs(b):  # also catches NaN
                return (
                    f"run {run} (fresh inputs): element {position} of the probed rows is "
                    f"{a:.6g}, expected {b:.6g} (tolerance {atol:g} + {rtol:g}·|expected|)"
                )
    return RECHECK_OK


def check_fingerprints(case: PerfCase, got: list[float | None] | None, want: list[list[float] | None]) -> str:
    """"ok", or the first checked run whose whole-output fingerprint differs from SDPA's on the same
    inputs by more than the dtype's relative tolerance of the fingerprint's scale."""
    rtol, _ = PROBE_TOLERANCE.get(case.dtype, (1e-2, 1e-2))
    for run, (mark, reference) in enumerate(zip(got or [], want)):
        if reference is None:
            continue
        expected, scale = reference
        if mark is None or not abs(mark - expected) <= rtol * scale:  # also catches NaN
            seen = "none" if mark is None else f"{mark:.6g}"
            return (f"run {run} (fresh inputs): the whole output differs from SDPA's "
                    f"(weighted sum {seen}, expected {expected:.6g} ± {rtol * scale:.3g})")
    return RECHECK_OK


def timing_problem(case: PerfCase, measured: Measured, plan: PerfPlan, bound: tuple[float, str],
                   forward_seconds: float = 0.0) -> str | None:
    """Why the times the learner's process reported cannot be true, or None.

    Each must be a positive finite number of seconds, none may beat the FLOP/s the device can do
    (``bound``), and none may be longer than the request as the grader's clock saw it; nor may
    they be far below what that clock saw (the clock inside the learner's process was changed).
    ``forward_seconds``: what the backward's refill spends on its forward pass, as the clean
    process timed it; a FLOP rate would either reject honest runs on a loaded machine or leave
    room to do the whole backward in the refill.
    """
    samples = measured.samples
    if len(samples) != plan.runs:
        return f"timing: {len(samples)} times for {plan.runs} runs"
    for run, seconds in enumerate(samples):
        if not (math.isfinite(seconds) and seconds > 0):
            return f"timing: run {run} reported {seconds!r} s, not a positive time"
    fastest = min(samples)
    peak, source = bound
    if case.flops / fastest > peak:
        return (f"timing: run {samples.index(fastest)} reported {format_seconds(fastest)}, "
                f"{case.flops / fastest / 1e12:.3g} TFLOP/s, above the {peak / 1e12:.3g} TFLOP/s of {source}")
    batches = _batches(measured)
    for batch in batches:
        if batch.inside > batch.outside * (1 + BRACKET_ROUNDING):
            runs = f"run {batch.first}" if batch.size == 1 else f"runs {batch.first}–{batch.first + batch.size - 1}"
            return (f"timing: {runs} reported {format_seconds(batch.inside)}, longer than the "
                    f"{format_seconds(batch.outside)} the whole run took")
    # The checked batches' brackets include their probes: work skipped in the call and done there shows.
    checked = [batch for batch in batches if batch.probed] or batches
    if checked:
        inside = statistics.median(batch.inside / batch.size for batch in checked)
        outside = statistics.median(batch.outside / batch.size for batch in checked)
        wait = BRACKET_SLACK_SECONDS.get(plan.device, 5e-3)
        requests = statistics.median(batch.requests * wait / batch.size for batch in checked)
        factor = BRACKET_FACTOR.get(plan.device, 2.0)
        slack = requests + per_run_cost(case, plan.device) + factor * forward_seconds
        if inside * factor + slack < outside:
            return (f"timing: your process reported {format_seconds(inside)} per run (median), but the grader's own "
                    f"clock saw {format_seconds(outside)}")
    return None


def per_run_cost(case: PerfCase, device: str) -> float:
    """What each run costs inside the grader's clock beyond the call: the refill, the output's copy,
    weights and products, and on GPU the L2 flush and the launches and synchronisation around it."""
    moved = case.qkv_bytes() + 3 * case.output_bytes()
    cost = moved / BRACKET_BYTES_PER_SECOND.get(device, 1e8)
    if device == "cuda":
        cost += L2_FLUSH_BYTES / GPU_FLUSH_BYTES_PER_SECOND + GPU_RUN_SLACK_SECONDS
    return cost


@dataclass(frozen=True)
class _Batch:
    first: int  # its first run
    size: int
    inside: float  # the learner's process's times, summed
    outside: float  # the grader's clock around its runs and probes
    probed: bool

    @property
    def requests(self) -> int:
        return 2 if self.probed else 1  # the runs, then their probes


def _batches(measured: Measured) -> list[_Batch]:
    sizes = measured.batch_sizes or [1] * len(measured.brackets or [])
    probes = measured.probes or []
    found, first = [], 0
    for size, outside in zip(sizes, measured.brackets or []):
        runs = range(first, first + size)
        found.append(_Batch(first, size, sum(measured.samples[first:first + size]), outside,
                            any(run < len(probes) and probes[run] is not None for run in runs)))
        first += size
    return found


def recheck(case: PerfCase, mine: Measured, rows: list[Any], marks: list[Any] | None) -> str:
    if not mine.samples:
        return NOT_RUN
    found = check_probes(case, mine.probes, rows)
    if found == RECHECK_OK and marks is not None:
        found = check_fingerprints(case, mine.fingerprints, marks)
    return found


def format_seconds(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"
