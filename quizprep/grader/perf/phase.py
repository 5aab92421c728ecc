"""The perf phase as the grader runs it: SDPA in a clean process, then the learner's file in its
sandboxed worker, then the report; and the hook an exercise's spec plugs in (`perf_phase`).

Every input derives from one secret seed (the grade's, so ``--seed`` replays it), which only the
grader and the clean process know. No process outlives the phase: the clean one and the
learner's die with the grader (``PR_SET_PDEATHSIG``), and their process groups are killed on
every way out of it, SIGTERM and SIGHUP included.
"""
from __future__ import annotations

import dataclasses
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from quizprep.grader.device import policy_for
from quizprep.grader.learner_side.perf_runner import Measured
from quizprep.grader.learner_side.perf_worker import TARGETS
from quizprep.grader.perf.plan import PerfError, PerfPlan, cpu_plan, gpu_plan
from quizprep.grader.perf.remote import measure_learner
from quizprep.grader.perf.report import PerfReport, build_report, headline
from quizprep.grader.worker_session import Limits

if TYPE_CHECKING:
    from quizprep.grader.spec import CheckResult

# The death signal is armed before torch is imported (seconds): a grader killed meanwhile leaves nothing.
_BASELINE = ("import sys; from quizprep.grader.learner_side import sandbox; sandbox.die_with_parent(int(sys.argv[1])); "
             "from quizprep.grader.perf.baseline import main; sys.exit(main(sys.argv[1:]))")


def run_baseline(plan: PerfPlan, deadline: float) -> dict[str, Any]:
    """SDPA and the float64 probes, in a clean process; its JSON comes back on a pipe."""
    left = deadline - time.monotonic()
    # The plan holds the secret seed: it goes on a pipe, never on the command line or in the
    # environment, which other processes can read in /proc.
    process = subprocess.Popen(
        [sys.executable, "-c", _BASELINE, str(os.getpid()), str(left)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        text=True,
    )
    try:
        output, errors = process.communicate(plan.to_json(), timeout=max(left, 0))
    except subprocess.TimeoutExpired:
        raise PerfError(f"timing SDPA took longer than the {left:.0f} s left") from None
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if process.returncode != 0:
        tail = "\n".join(errors.strip().splitlines()[-8:])
        raise PerfError(f"timing SDPA failed (exit {process.returncode}):\n{tail}")
    return json.loads(output)


def run_perf(
    path: str | os.PathLike,
    exercise: str = "attention",
    device: str | None = None,
    seed: int | None = None,
    timeout: float = 900,
    plan: PerfPlan | None = None,
    limits: Limits | None = None,
    forbidden: tuple[str, ...] | None = None,
    full: bool = False,
) -> PerfReport:
    """The whole perf phase. ``seed``: the secret the inputs derive from (drawn afresh if None);
    ``limits`` and ``forbidden``: the correctness worker's (the exercise's by default); ``full``:
    on GPU every size of the plan, not the default few; ``device``: where to time (a grade passes
    its policy's), by default the GPU when there is one."""
    from quizprep.grader.grade import exit_on_termination_signals

    if exercise not in TARGETS:
        raise PerfError(f"no perf comparison is defined for the {exercise!r} exercise")
    if forbidden is None:
        from quizprep.grader.exercises import load_spec

        forbidden = load_spec(exercise).forbidden
    device = plan.device if plan else device or policy_for("auto").perf
    plan = plan or default_plan(exercise, device, full)
    plan = dataclasses.replace(plan, seed=secrets.randbits(63) if seed is None else seed)
    base = limits or Limits()
    limits = dataclasses.replace(base.on(device), total_seconds=timeout, threads=plan.threads)
    exit_on_termination_signals()
    deadline = time.monotonic() + timeout
    # One after the other: two processes timing at once would slow each other down.
    baseline = run_baseline(plan, deadline)
    yours, warnings = measure_learner(Path(path), exercise, plan, deadline, forbidden, limits)
    return build_report(
        plan, yours, [Measured(**m) for m in baseline["measured"]], baseline["references"],
        baseline["device_name"], warnings, baseline["fingerprints"], baseline["forward_seconds"],
    )


# What a case kind is timed against, as the report's titles name it.
BASELINE_NAMES = {"attention": "PyTorch SDPA", "backward": "autograd of PyTorch SDPA (forward and backward)",
                  "rope": "Hugging Face Llama's rotate_half"}
# Paged decode runs each query row as a sequence of its own (perf_worker._paged), which code that
# loops over sequences in Python pays per row: on GPU one batch row, and n up to 4096.
PAGED_GPU_BATCH, PAGED_GPU_LONGEST = 1, 4096
# On a CPU, at the attention sizes, a paged decode that loops over sequences took 160 s and the
# backward's SDPA baseline alone 73 s of the phase's 45 (the default --timeout's whole grade): these
# take about 25 s each on a quiet 2-core machine, the tiled backward still over several blocks.
CPU_PLANS: dict[str, dict[str, Any]] = {"paged-decode": {"batch": 1, "sizes": (64, 128, 256), "runs": 10},
                                        "attention-backward": {"sizes": (128, 256, 512), "runs": 10}}


def default_plan(exercise: str, device: str, full: bool = False) -> PerfPlan:
    """The sizes an exercise is timed at on ``device``, in the case kind its target computes."""
    kind = TARGETS[exercise].kind
    if device != "cuda":
        return cpu_plan(kind=kind, **CPU_PLANS.get(exercise, {}))
    if exercise == "paged-decode":
        return gpu_plan(full=full, kind=kind, batch=PAGED_GPU_BATCH, longest=PAGED_GPU_LONGEST)
    return gpu_plan(full=full, kind=kind)


def perf_phase(exercise: str) -> Callable[[Any], Any]:
    """`ExerciseSpec.perf` for ``exercise``: time the learner's file once every check passed."""

    def phase(ctx: Any) -> Any:
        from quizprep.grader.spec import CheckResult, PhaseResult, Status

        title = f"speed and memory against {BASELINE_NAMES[TARGETS[exercise].kind]}"
        session = ctx.session
        session.close()  # the correctness worker is gone before the secret plan exists anywhere
        timeout = session.limits.total_seconds  # the whole phase, as --timeout bounds the checks
        try:
            report = run_perf(session.path, exercise, device=ctx.device, seed=ctx.seed, timeout=timeout,
                              limits=session.limits, forbidden=session.forbidden,
                              full=getattr(ctx, "perf_full", False))
        except PerfError as error:
            return PhaseResult([CheckResult("perf", title, Status.FAIL, str(error),
                                            hint="The perf run uses far larger inputs than the checks.")])
        return PhaseResult([_recheck(report), _timed(report, title)], report.to_dict())

    return phase


def _recheck(report: PerfReport) -> CheckResult:
    from quizprep.grader.spec import CheckResult, Status

    wrong = [row for row in report.rows if row.differs]
    if not wrong:
        return CheckResult("perf-recheck", "timed outputs re-checked on fresh inputs", Status.PASS,
                           "every re-checked run matches, and every time is possible")
    first = wrong[0]
    forged = first.timings_forged  # the times cannot be true, whatever the outputs
    return CheckResult(
        "perf-recheck", "timed outputs re-checked on fresh inputs", Status.FAIL, f"{first.case.label}: {first.check}",
        diagnosis=("timings that cannot be true" if forged
                   else "outputs replayed from an earlier call, or wrong at large sizes"),
        hint=("Time nothing yourself: the grader times each call and checks what it is told."
              if forged else "Compute from the inputs of each call; cache nothing between calls."),
    )


def _timed(report: PerfReport, title: str) -> CheckResult:
    from quizprep.grader.spec import CheckResult, Status

    errors = [row for row in report.rows if row.yours.error]
    if errors:
        return CheckResult("perf", title, Status.FAIL, f"{errors[0].case.label}: {errors[0].yours.error}")
    # Skips are decided in the learner's process: a perf phase that timed nothing is no pass.
    timed = any(row.yours.stats for row in report.rows)
    return CheckResult("perf", title, Status.PASS if timed else Status.FAIL, headline(report))
