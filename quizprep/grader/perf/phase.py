"""The perf phase as the grader runs it: SDPA in a clean process, then the learner's file, then the
report, and the hook an exercise's spec plugs in (`perf_phase`)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from quizprep.grader.perf.measure import Measured
from quizprep.grader.perf.plan import PerfPlan, cpu_plan, gpu_plan
from quizprep.grader.perf.report import PerfReport, build_report, headline


@dataclass(frozen=True)
class Target:
    """How the perf phase calls an exercise's function: ``attend(fn)(q, k, v, mask) -> out``."""

    function: str
    adapt: Callable[[Callable], Callable]


def _first_output(fn: Callable) -> Callable:
    def attend(q, k, v, mask):
        out = fn(q, k, v, mask)
        return out[0] if isinstance(out, (tuple, list)) else out

    return attend


TARGETS = {"attention": Target("scaled_dot_product_attention", _first_output)}


def run_worker(args: list[str], timeout: float) -> dict[str, Any]:
    """Run ``python -m quizprep.grader.perf.learner ARGS`` in a fresh process; its JSON result."""
    with tempfile.TemporaryDirectory(prefix="quizprep-perf-") as scratch:
        result_path = Path(scratch) / "result.json"
        command = [sys.executable, "-m", "quizprep.grader.perf.learner", *args, str(result_path)]
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
            text=True,
        )
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.communicate()
            raise PerfError(f"the perf run took longer than {timeout:.0f} s") from None
        if process.returncode != 0 or not result_path.exists():
            tail = "\n".join(output.strip().splitlines()[-8:])
            raise PerfError(f"the perf worker failed (exit {process.returncode}):\n{tail}")
        return json.loads(result_path.read_text())


class PerfError(RuntimeError):
    """The perf phase could not produce numbers; the message says why."""


def choose_device(requested: str = "auto") -> str:
    import torch

    if requested == "cuda" and not torch.cuda.is_available():
        raise PerfError("--device cuda was asked for, but PyTorch sees no CUDA device")
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return requested


def run_perf(
    path: str | os.PathLike,
    exercise: str = "attention",
    device: str = "auto",
    seed: int = 0,
    timeout: float = 900,
    plan: PerfPlan | None = None,
) -> PerfReport:
    """The whole perf phase: SDPA in a clean process first, then the learner's file."""
    if exercise not in TARGETS:
        raise PerfError(f"no perf comparison is defined for the {exercise!r} exercise")
    device = choose_device(device)
    plan = plan or (gpu_plan(seed) if device == "cuda" else cpu_plan(seed))
    plan_json = plan.to_json()
    # One after the other: two processes timing at once would slow each other down.
    baseline = run_worker(["sdpa", plan_json], timeout)
    learner = run_worker(["learner", plan_json, "--file", str(path), "--exercise", exercise], timeout)
    warnings = [
        f"your code changed {key} from {old!r} to {new!r} while it ran; its timings may not "
        "compare like for like"
        for key, (old, new) in learner["flags_changed"].items()
    ]
    return build_report(
        plan,
        [Measured(**m) for m in learner["measured"]],
        [Measured(**m) for m in baseline["measured"]],
        baseline["references"],
        baseline["device_name"],
        warnings,
    )



def perf_phase(exercise: str) -> Callable[[Any], Any]:
    """`ExerciseSpec.perf` for ``exercise``: time the learner's file once every check passed."""

    def phase(ctx: Any) -> Any:
        from quizprep.grader.spec import CheckResult, PhaseResult

        title = "speed and memory against PyTorch SDPA"
        timeout = max(900.0, ctx.session.limits.total_seconds)
        try:
            report = run_perf(ctx.session.path, exercise, device=ctx.device, seed=ctx.seed, timeout=timeout)
        except PerfError as error:
            return PhaseResult([CheckResult("perf", title, "fail", str(error),
                                            hint="The perf run uses far larger inputs than the checks.")])
        recheck = [row for row in report.rows if row.check not in ("ok", "not run")]
        errors = [row for row in report.rows if row.yours.error]
        checks = [
            CheckResult(
                "perf-recheck", "timed outputs re-checked on fresh inputs",
                "fail" if recheck else "pass",
                f"{recheck[0].case.label}: {recheck[0].check}" if recheck else "every timed run matches",
                diagnosis="outputs replayed from an earlier call, or wrong at large sizes" if recheck else "",
                hint="Compute from the inputs of each call; cache nothing between calls." if recheck else "",
            ),
            CheckResult(
                "perf", title, "fail" if errors else "pass",
                f"{errors[0].case.label}: {errors[0].yours.error}" if errors else headline(report),
            ),
        ]
        return PhaseResult(checks, report.to_dict())

    return phase
