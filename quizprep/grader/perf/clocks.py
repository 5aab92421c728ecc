"""The clocks of the perf phase, and the loop that refills inputs before every timed call.

GPU timing uses CUDA events around each run with the L2 cache flushed before it (not
`triton.testing.do_bench`, which cannot give each run fresh inputs). CPU timing reads the
monotonic clock around exactly one call (`torch.utils.benchmark.Timer.timeit(1)` would call the
code twice more on the same inputs first, which a cache keyed by the inputs turns into a hit).
"""
from __future__ import annotations

import time
from typing import Any, Callable

from quizprep.grader.perf.plan import PerfPlan

# Bigger than the L2 cache of every current NVIDIA GPU (H100: 50 MB), so zeroing it
# evicts whatever the previous run left there.
L2_FLUSH_BYTES = 256 * 2**20
# Bound before any learner code runs, so patching time.perf_counter later changes nothing here.
_now = time.perf_counter


# --------------------------------------------------------------------------- clocks


class WallClock:
    """The monotonic clock around exactly one call."""

    label = "wall clock around one call"

    def timer(self, step: Callable[[], None]) -> Callable[[], float]:
        def once() -> float:
            started = _now()
            step()
            return _now() - started

        return once


class CpuClock(WallClock):
    """One call per reading at the process's fixed torch thread count."""

    label = "CPU, monotonic clock around one call"

    def __init__(self, threads: int) -> None:
        self.threads = threads


class CudaClock:
    """CUDA events around each run, with the L2 cache flushed before it."""

    label = "CUDA events, L2 flushed before each run"

    def __init__(self) -> None:
        import torch

        self._torch = torch
        self._flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.int8, device="cuda")

    def timer(self, step: Callable[[], None]) -> Callable[[], float]:
        torch = self._torch

        def once() -> float:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            self._flush.zero_()
            start.record()
            step()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3

        return once


def clock_for(plan: PerfPlan) -> Any:
    return CudaClock() if plan.device == "cuda" else CpuClock(plan.threads)


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
