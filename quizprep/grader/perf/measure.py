"""Layer 2 of the perf phase, torch: clocks, fresh inputs, and timing a contender on every case.

`measure_target` times any ``attend(q, k, v, causal)`` callable; `measure_sdpa` times every SDPA
backend that runs. Both use the same clock, the same fresh inputs per run (regenerated from the
plan's seed, so run ``i`` of every contender sees identical data) and the same warm-up.

GPU timing uses CUDA events around each run with the L2 cache flushed before it (not
`triton.testing.do_bench`, which cannot give each run fresh inputs). CPU timing uses
`torch.utils.benchmark.Timer` with a fixed thread count, labelled CPU everywhere.
"""
from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from quizprep.grader.perf.plan import (
    FIRST_GUESS_SCORE_BYTES_PER_PAIR,
    PROBES_PER_RUN,
    PerfCase,
    PerfPlan,
    budget_bytes,
    score_tensors,
    skip_reason,
)

# Bigger than the L2 cache of every current NVIDIA GPU (H100: 50 MB), so zeroing it
# evicts whatever the previous run left there.
L2_FLUSH_BYTES = 256 * 2**20
SDPA_BACKENDS = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH")
# The ATen op each backend dispatches to, to name the backend that actually ran.
_BACKEND_OPS = {
    "_scaled_dot_product_flash_attention": "flash",
    "_scaled_dot_product_flash_attention_for_cpu": "flash (CPU)",
    "_scaled_dot_product_efficient_attention": "memory-efficient",
    "_scaled_dot_product_cudnn_attention": "cuDNN",
    "_scaled_dot_product_fused_attention_overrideable": "overrideable",
}


# --------------------------------------------------------------------------- clocks


class CpuClock:
    """`torch.utils.benchmark.Timer`, one run per reading, at a fixed thread count."""

    label = "CPU, torch.utils.benchmark"

    def __init__(self, threads: int) -> None:
        self.threads = threads

    def timer(self, step: Callable[[], None]) -> Callable[[], float]:
        from torch.utils import benchmark

        timer = benchmark.Timer(stmt="step()", globals={"step": step}, num_threads=self.threads)
        return lambda: timer.timeit(1).times[0]


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


# --------------------------------------------------------------------------- workers (torch)


@dataclass
class Measured:
    """One contender on one case, as a worker reports it (plain data only)."""

    case: int
    who: str  # "yours" or an SDPA backend name
    ran: str | None = None  # the backend that actually ran, for SDPA
    samples: list[float] = field(default_factory=list)
    peak_bytes: int | None = None
    score_tensors: int | None = None
    score_bytes: int | None = None  # created in all
    peak_live_bytes: int | None = None  # audit: intermediates alive at once
    probes: list[list[float]] | None = None  # per run, flattened probe rows
    skipped: str | None = None
    error: str | None = None


class Inputs:
    """q, k, v for one case, refilled in place from (seed, case, run) so every process agrees."""

    def __init__(self, case: PerfCase, index: int, plan: PerfPlan) -> None:
        import torch

        self.torch, self.case, self.index, self.plan = torch, case, index, plan
        dtype = getattr(torch, case.dtype)
        shape = (case.batch, case.heads, case.n, case.head_dim)
        self.q, self.k, self.v = (torch.empty(shape, dtype=dtype, device=plan.device) for _ in range(3))
        self.generator = torch.Generator(device=plan.device)

    def refill(self, run: int) -> None:
        self.generator.manual_seed(_seed(self.plan.seed, self.index, run))
        for tensor in (self.q, self.k, self.v):
            tensor.normal_(generator=self.generator)

    def probe_index(self, run: int) -> list[tuple[int, int, int]]:
        """(batch, head, row) triples whose output rows are re-checked for this run."""
        import random

        rng = random.Random(_seed(self.plan.seed, self.index, run) ^ 0x5EED)
        case = self.case
        return [
            (rng.randrange(case.batch), rng.randrange(case.heads), rng.randrange(case.n))
            for _ in range(PROBES_PER_RUN)
        ]

    def probe_values(self, run: int, out: Any) -> list[float]:
        rows = [out[b, h, row].float().flatten() for b, h, row in self.probe_index(run)]
        return self.torch.stack(rows).cpu().flatten().tolist()

    def reference_probe(self, run: int) -> list[float]:
        """The same rows in float64, computed here from the inputs of ``run``."""
        torch = self.torch
        rows = []
        for b, h, row in self.probe_index(run):
            q = self.q[b, h, row].double()
            keys = self.k[b, h].double()
            values = self.v[b, h].double()
            if self.case.causal:
                keys, values = keys[: row + 1], values[: row + 1]
            weights = torch.softmax(keys @ q / math.sqrt(self.case.head_dim), dim=0)
            rows.append(weights @ values)
        return torch.stack(rows).cpu().flatten().tolist()


def _seed(seed: int, case: int, run: int) -> int:
    return (seed * 1_000_003 + case * 10_007 + run + 20_011) % 2**63


def _free_memory(device: str) -> int | None:
    import torch

    if device == "cuda":
        return torch.cuda.mem_get_info()[0]
    try:
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        if limit != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as statm:
                used = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            available = min(available, limit - used)
    except (ImportError, OSError, ValueError):
        pass
    return max(available, 0)


def _clock(plan: PerfPlan) -> Any:
    return CudaClock() if plan.device == "cuda" else CpuClock(plan.threads)


def _peak_gpu_bytes(call: Callable[[], Any], inputs_bytes: int) -> int:
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    out = call()
    torch.cuda.synchronize()
    del out
    return torch.cuda.max_memory_allocated() - before + inputs_bytes


def measure_target(
    attend: Callable[[Any, Any, Any, Any], Any],
    plan: PerfPlan,
    who: str = "yours",
    sdpa: bool = False,
) -> list[Measured]:
    """Time ``attend(q, k, v, mask)`` on every case, smallest first.

    For the learner, ``mask`` is a bool (n, m) lower-triangular tensor on causal cases and
    None otherwise; for SDPA (``sdpa=True``) it is just True or None, and each case first
    names the backend that runs, or records why none does. A size whose budget would not
    fit in free memory is skipped: the budget scales the score-sized bytes the memory
    audit saw at the previous size.
    """
    import torch

    clock = _clock(plan)
    results: list[Measured] = []
    score_bytes_per_pair = FIRST_GUESS_SCORE_BYTES_PER_PAIR
    for index in sorted(range(len(plan.cases)), key=lambda i: plan.cases[i].n):
        case = plan.cases[index]
        result = Measured(case=index, who=who)
        results.append(result)
        needed = budget_bytes(case, score_bytes_per_pair, with_mask=not sdpa)
        result.skipped = skip_reason(needed, _free_memory(plan.device))
        if result.skipped:
            continue
        try:
            with torch.no_grad():
                measured = _measure_one(attend, plan, index, result, clock, sdpa)
            score_bytes_per_pair = measured if measured is not None else score_bytes_per_pair
        except torch.OutOfMemoryError:
            result.skipped = "ran out of memory (the budget prediction was too low)"
        except Exception as error:  # the code under test failed on this size
            result.error = f"{type(error).__name__}: {error}"
        if plan.device == "cuda":
            torch.cuda.empty_cache()
    return sorted(results, key=lambda result: result.case)


def _measure_one(
    attend, plan: PerfPlan, index: int, result: Measured, clock: Any, sdpa: bool
) -> float | None:
    """Fill ``result`` for one case; return its score-sized bytes per (query, key) pair."""
    import warnings

    import torch

    from quizprep.grader.memaudit import audit

    case = plan.cases[index]
    inputs = Inputs(case, index, plan)
    mask: Any = None
    if case.causal:
        mask = True if sdpa else torch.ones(case.n, case.n, dtype=torch.bool, device=plan.device).tril()

    def call() -> Any:
        return attend(inputs.q, inputs.k, inputs.v, mask)

    inputs.refill(0)
    if sdpa:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # each refusing kernel warns why; we say it once
                result.ran = backend_that_ran(call)
        except RuntimeError as error:
            result.skipped = "does not run here: " + str(error).strip().splitlines()[0]
            return None
    _, report = audit(call)
    scores = score_tensors(report.allocations, case.pairs)
    result.score_tensors = len(scores)
    result.score_bytes = sum(allocation.nbytes for allocation in scores)
    result.peak_live_bytes = report.peak_live_bytes
    input_bytes = case.qkv_bytes() + (0 if sdpa else case.mask_bytes())
    if plan.device == "cuda":
        result.peak_bytes = _peak_gpu_bytes(call, input_bytes)
    else:
        result.peak_bytes = input_bytes + report.peak_live_bytes
    probes: list[list[float]] = []
    result.samples = time_runs(
        call, inputs.refill, clock, plan.runs, plan.warmup,
        on_output=lambda run, out: probes.append(inputs.probe_values(run, out)),
    )
    result.probes = probes
    return result.score_bytes / case.pairs


def sdpa_attend(backend: str | None) -> Callable[[Any, Any, Any, Any], Any]:
    """SDPA restricted to one backend (``None``: PyTorch's own choice)."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def attend(q, k, v, causal):
        if backend is None:
            return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
        with sdpa_kernel([getattr(SDPBackend, backend)]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))

    return attend


def backend_that_ran(call: Callable[[], Any]) -> str:
    """Name the SDPA kernel a call dispatches to, by the ATen op it reaches."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Ops(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.names: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(func.overloadpacket.__name__)
            return func(*args, **(kwargs or {}))

    with Ops() as ops:
        call()
    for name in ops.names:
        if name in _BACKEND_OPS:
            return _BACKEND_OPS[name]
    return "math"


def reference_probes(plan: PerfPlan) -> list[list[list[float]]]:
    """For every case and run, the float64 probe rows of that run's inputs."""
    references = []
    for index, case in enumerate(plan.cases):
        inputs = Inputs(case, index, plan)
        per_run = []
        for run in range(plan.runs):
            inputs.refill(run)
            per_run.append(inputs.reference_probe(run))
        references.append(per_run)
    return references


def measure_sdpa(plan: PerfPlan) -> list[Measured]:
    """Every SDPA backend on every case (those that cannot run say why)."""
    results: list[Measured] = []
    for backend in SDPA_BACKENDS:
        results += measure_target(sdpa_attend(backend), plan, who=backend, sdpa=True)
    return results


def _numerics_flags() -> dict[str, Any]:
    import torch

    return {
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "cuda_matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
        "flash_sdp_enabled": torch.backends.cuda.flash_sdp_enabled(),
        "mem_efficient_sdp_enabled": torch.backends.cuda.mem_efficient_sdp_enabled(),
        "math_sdp_enabled": torch.backends.cuda.math_sdp_enabled(),
        "num_threads": torch.get_num_threads(),
    }



def sdpa_worker(plan: PerfPlan) -> dict[str, Any]:
    import torch

    torch.set_num_threads(plan.threads)
    references = reference_probes(plan)
    measured = measure_sdpa(plan)
    name = torch.cuda.get_device_name() if plan.device == "cuda" else "CPU"
    return {"measured": [asdict(m) for m in measured], "references": references,
            "device_name": name, "flags": _numerics_flags()}

