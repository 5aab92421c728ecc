"""The clocks of the perf phase: stdlib and torch only, as they run in the learner's process.

The perf worker loads this file by path there; the grader's side imports it by name, to time SDPA
with the same clocks and to name them in the report. GPU timing uses CUDA events around each run
with the L2 cache flushed before it (not `triton.testing.do_bench`, which cannot give each run
fresh inputs). CPU timing reads the monotonic clock around exactly one call
(`torch.utils.benchmark.Timer.timeit(1)` would call the code twice more on the same inputs first,
which a cache keyed by the inputs turns into a hit).
"""
from __future__ import annotations

import time
from typing import Any, Callable

# Bigger than the L2 cache of every current NVIDIA GPU (H100: 50 MB), so zeroing it
# evicts whatever the previous run left there.
L2_FLUSH_BYTES = 256 * 2**20
# Bound before any learner code runs, so patching time.perf_counter later changes nothing here.
_now = time.perf_counter



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


def clock_for(device: str, threads: int) -> Any:
    """The clock of a perf run on ``device``; made once a process (on GPU it holds the flush buffer)."""
    return CudaClock() if device == "cuda" else CpuClock(threads)
