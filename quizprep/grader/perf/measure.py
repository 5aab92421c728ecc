"""Layer 2 of the perf phase, torch: every case of a plan, each contender timed on fresh inputs.

The code that runs in the learner's process, `CaseRunner` and the clocks, lives in
:mod:`quizprep.grader.learner_side.perf_runner` and :mod:`~quizprep.grader.learner_side.perf_clocks`
(stdlib and torch only). Here the grader drives a runner through every case: in the clean process
`measure_target` makes one `CaseRunner` per case for every SDPA backend (and the tests for plain
functions); for the learner a `RemoteRunner` (:mod:`.remote`) asks one in their process, one
request at a time. What needs the secret seed or the memory budget stays here: the seed of each
run, which runs are re-checked, and whether a size fits in the memory the runner reports free.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable

from quizprep.grader.learner_side import memaudit
from quizprep.grader.learner_side.perf_clocks import clock_for
from quizprep.grader.learner_side.perf_runner import CaseRunner, Measured
from quizprep.grader.perf.plan import (
    FIRST_GUESS_SCORE_BYTES_PER_PAIR,
    PerfCase,
    PerfError,
    PerfPlan,
    budget_bytes,
    probe_plan,
    run_seed,
    skip_reason,
)

# The most memory the copies of one batch's outputs may take.
KEPT_OUTPUT_BYTES = 2**30
SDPA_BACKENDS = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH")


class CaseError(Exception):
    """A case that failed in words already fit for the report."""


def measure_target(
    attend: Callable[[Any, Any, Any, Any], Any],
    plan: PerfPlan,
    who: str = "yours",
    sdpa: bool = False,
) -> list[Measured]:
    """Time ``attend(q, k, v, mask)`` on every case in this process (see `measure_cases`)."""
    clock = clock_for(plan.device, plan.threads)
    return measure_cases(
        lambda index: CaseRunner(attend, plan.cases[index], plan.device, clock, memaudit.audit, sdpa),
        plan, who, with_mask=not sdpa)


def measure_cases(make_runner: Callable[[int], Any], plan: PerfPlan, who: str,
                  with_mask: bool = True) -> list[Measured]:
    """Every case, smallest first, each through the runner ``make_runner(index)`` (a `CaseRunner`
    here, or one in the learner's process driven by requests). A size whose budget would not fit
    in the memory the runner reports free is skipped (``with_mask``: the budget counts the mask
    tensor the learner is handed; SDPA gets a flag); a size the code fails on records the error
    and the others go on."""
    import torch

    results: list[Measured] = []
    score_bytes_per_pair = FIRST_GUESS_SCORE_BYTES_PER_PAIR
    for index in sorted(range(len(plan.cases)), key=lambda i: plan.cases[i].n):
        result = Measured(case=index, who=who)
        results.append(result)
        try:
            with torch.no_grad():
                needed = budget_bytes(plan.cases[index], score_bytes_per_pair, with_mask)
                measure_case(make_runner(index), plan, index, result, needed)
            if result.score_bytes is not None:
                score_bytes_per_pair = result.score_bytes / plan.cases[index].pairs
        except torch.OutOfMemoryError:
            result.skipped = "ran out of memory (the budget prediction was too low)"
        except PerfError:
            raise  # the whole phase stops: the learner's process is gone or out of time
        except CaseError as error:
            result.error = str(error)
        except Exception as error:  # the code under test failed on this size
            result.error = f"{type(error).__name__}: {error}"
        if plan.device == "cuda":
            torch.cuda.empty_cache()
    return sorted(results, key=lambda result: result.case)


def measure_case(runner: Any, plan: PerfPlan, index: int, result: Measured, needed_bytes: int) -> None:
    """Skip a size whose budget, ``needed_bytes``, would not fit; else set up, warm up and time it,
    a batch of runs per request (:func:`runs_per_request`). The probed runs' rows and fingerprints
    are asked for after their batch's clock stopped; the wall clock around each batch, and around
    its probes, is kept beside the runner's own readings."""
    result.skipped = skip_reason(needed_bytes, runner.free_bytes())
    if result.skipped:
        return
    runner.setup(run_seed(plan.seed, index, "setup"), result)
    if result.skipped:  # an SDPA backend that does not run here
        return
    rows = probe_plan(plan.seed, index, plan.cases[index], plan.runs)
    started = time.perf_counter()
    runner.run_batch([run_seed(plan.seed, index, -1 - run) for run in range(plan.warmup)])
    size = runs_per_request(plan, plan.cases[index], (time.perf_counter() - started) / max(plan.warmup, 1))
    # The re-check's first use loads its kernels (milliseconds each on a GPU, where modules load
    # lazily): done here, outside every bracket, so that no batch's clock counts it against the run.
    # (Row 0 of head 0: the rows the timed runs will be re-checked at stay secret.)
    runner.probe_batch([(0, [(0, 0, 0)], run_seed(plan.seed, index, "weights:warmup"))])
    result.samples, result.probes, result.fingerprints, result.brackets, result.batch_sizes = [], [], [], [], []
    for first in range(0, plan.runs, size):
        batch = range(first, min(first + size, plan.runs))
        started = time.perf_counter()  # runs in the grader's process
        samples = runner.run_batch([run_seed(plan.seed, index, run) for run in batch])
        asked = [(position, rows[run], run_seed(plan.seed, index, f"weights:{run}"))
                 for position, run in enumerate(batch) if rows[run]]
        answers = iter(runner.probe_batch(asked) if asked else [])
        result.brackets.append(time.perf_counter() - started)
        result.batch_sizes.append(len(batch))
        result.samples += samples
        for run in batch:
            values, mark = next(answers) if rows[run] else (None, None)
            result.probes.append(values)
            result.fingerprints.append(mark)


def runs_per_request(plan: PerfPlan, case: PerfCase, seconds_per_run: float) -> int:
    """On CPU one run per request. On GPU a run can take microseconds while a request (a pipe
    round trip, launches, synchronising) costs milliseconds: a batch of runs that lasts about
    plan.batch_seconds makes that cost small beside what is timed, within the memory its kept
    outputs take."""
    if plan.batch_seconds <= 0:
        return 1
    by_time = math.ceil(plan.batch_seconds / max(seconds_per_run, 1e-6))
    by_memory = max(1, KEPT_OUTPUT_BYTES // case.output_bytes())
    return max(1, min(plan.runs, by_time, by_memory))


def time_runs(
    call: Callable[[], Any],
    refill: Callable[[int], None],
    clock: Any,
    runs: int,
    warmup: int,
    on_output: Callable[[int, Any], None] = lambda run, out: None,
) -> list[float]:
    """Seconds for each of ``runs`` calls, inputs refilled (untimed) before every call.

    ``on_output(run, out)`` sees each timed run's output, after the clock stopped.
    """
    holder: list[Any] = [None]

    def step() -> None:
        holder[0] = call()

    read = clock.timer(step)
    for run in range(warmup):
        refill(-1 - run)
        read()
    samples = []
    for run in range(runs):
        holder[0] = None
        refill(run)
        samples.append(read())
        on_output(run, holder[0])
    holder[0] = None
    return samples
