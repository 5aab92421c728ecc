"""`quizprep grade --perf`: time a correct attention implementation against PyTorch SDPA.

Three layers, so the honest-numbers logic is testable on a laptop:

1. **Plan and statistics** (pure Python): the sizes to run, the FLOP and memory budget
   of each, the median with a distribution-free confidence interval, ties.
2. **Workers** (torch, one process each): `measure_target` times any ``attend(q, k, v,
   causal)`` callable; `measure_sdpa` times every SDPA backend that runs. Both use the
   same clock, the same fresh inputs per run (regenerated from the plan's seed, so run
   ``i`` of every contender sees identical data) and the same warm-up. The SDPA worker
   runs in a clean interpreter that the learner's code never touched.
3. **Report** (pure Python): joins the two, re-checks the learner's outputs on the timed
   inputs against float64 probes computed by the clean worker, and says in words what
   the memory numbers mean.

GPU timing uses CUDA events around each run with the L2 cache flushed before it (not
`triton.testing.do_bench`, which cannot give each run fresh inputs). CPU timing uses
`torch.utils.benchmark.Timer` with a fixed thread count, labelled CPU everywhere.
"""
from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from quizprep import budget

CONFIDENCE = 0.95
# Only this fraction of free memory is planned for: allocator fragmentation and the
# clock's own buffers need the rest.
MEMORY_HEADROOM = 0.8
# Bigger than the L2 cache of every current NVIDIA GPU (H100: 50 MB), so zeroing it
# evicts whatever the previous run left there.
L2_FLUSH_BYTES = 256 * 2**20
PROBES_PER_RUN = 8
# Before anything has been measured, plan as if the code held three fp32 score-sized tensors.
FIRST_GUESS_SCORE_BYTES_PER_PAIR = 12.0

# Dense (no sparsity) tensor-core peaks from NVIDIA's datasheets, FLOP/s, bf16 = fp16.
# Matched against torch.cuda.get_device_name(); unknown devices get no percentage.
DEVICE_PEAKS = (
    ("H200", 989e12, "H200 SXM, bf16/fp16 dense"),
    ("H100 80GB HBM3", 989e12, "H100 SXM, bf16/fp16 dense"),
    ("H100 SXM", 989e12, "H100 SXM, bf16/fp16 dense"),
    ("H100 PCIe", 756e12, "H100 PCIe, bf16/fp16 dense"),
    ("A100", 312e12, "A100, bf16/fp16 dense"),
)

# Tolerances of the re-check on timed inputs, against a float64 probe of the same rows.
# Wider than the correctness checks: long rows (m up to 16384) in 16-bit types.
PROBE_TOLERANCE = {"float32": (1e-4, 1e-4), "bfloat16": (5e-2, 5e-2), "float16": (1e-2, 1e-2)}

SDPA_BACKENDS = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH")
# The ATen op each backend dispatches to, to name the backend that actually ran.
_BACKEND_OPS = {
    "_scaled_dot_product_flash_attention": "flash",
    "_scaled_dot_product_flash_attention_for_cpu": "flash (CPU)",
    "_scaled_dot_product_efficient_attention": "memory-efficient",
    "_scaled_dot_product_cudnn_attention": "cuDNN",
    "_scaled_dot_product_fused_attention_overrideable": "overrideable",
}


# --------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class PerfCase:
    """One size: self-attention with n = m, inputs (B, H, n, d)."""

    batch: int
    heads: int
    n: int
    head_dim: int
    causal: bool
    dtype: str

    @property
    def label(self) -> str:
        mask = "causal" if self.causal else "full"
        return f"{self.dtype} B={self.batch} H={self.heads} n={self.n} d={self.head_dim} {mask}"

    @property
    def flops(self) -> int:
        return budget.attention_flops(self.batch, self.heads, self.n, self.n, self.head_dim, self.causal)

    @property
    def pairs(self) -> int:
        """Elements of one score-sized tensor, B·H·n·m."""
        return self.batch * self.heads * self.n * self.n

    def qkv_bytes(self) -> int:
        return 3 * self.output_bytes()

    def output_bytes(self) -> int:
        return self.batch * self.heads * self.n * self.head_dim * budget.dtype_bytes(self.dtype)

    def mask_bytes(self) -> int:
        """The boolean (n, m) mask handed to the learner for causal cases."""
        return self.n * self.n if self.causal else 0


@dataclass(frozen=True)
class PerfPlan:
    device: str  # "cpu" or "cuda"
    cases: tuple[PerfCase, ...]
    runs: int = 20
    warmup: int = 3
    seed: int = 0
    threads: int = 1  # CPU only; both contenders use the same count

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "cases": [asdict(case) for case in self.cases]})

    @classmethod
    def from_json(cls, text: str) -> "PerfPlan":
        data = json.loads(text)
        data["cases"] = tuple(PerfCase(**case) for case in data["cases"])
        return cls(**data)


def gpu_plan(seed: int = 0, runs: int = 20) -> PerfPlan:
    """bf16 and fp16, B=4, H=16, d ∈ {64, 128}, n from 512 to 16384, causal and not."""
    cases = tuple(
        PerfCase(4, 16, n, head_dim, causal, dtype)
        for dtype in ("bfloat16", "float16")
        for head_dim in (64, 128)
        for causal in (False, True)
        for n in (512, 1024, 2048, 4096, 8192, 16384)
    )
    return PerfPlan("cuda", cases, runs=runs, warmup=5, seed=seed)


def cpu_plan(seed: int = 0, runs: int = 20, sizes: Sequence[int] = (256, 512, 1024)) -> PerfPlan:
    """fp32, B=2, H=4, d=64: small enough for a laptop core or two."""
    cases = tuple(
        PerfCase(2, 4, n, 64, causal, "float32") for causal in (False, True) for n in sizes
    )
    return PerfPlan("cpu", cases, runs=runs, warmup=2, seed=seed)


# --------------------------------------------------------------------------- statistics


def median_ci_ranks(count: int, confidence: float = CONFIDENCE) -> tuple[int, int, float]:
    """0-based order-statistic ranks bracketing the median, and the interval's coverage.

    Distribution-free: the number of samples below the true median is Binomial(count, ½),
    so the 0-based [x_(j), x_(count-1-j)] covers it with probability 1 - 2·P(X ≤ j). With
    too few samples for ``confidence`` it returns the extremes and their lower coverage.
    """
    if count < 1:
        raise ValueError("no samples")
    low, tail_at_low = 0, 2.0**-count
    cumulative = 0.0
    for below in range(count // 2):
        cumulative += math.comb(count, below) / 2**count
        if 2 * cumulative > 1 - confidence:
            break
        low, tail_at_low = below, cumulative
    return low, count - 1 - low, 1 - 2 * tail_at_low


@dataclass(frozen=True)
class TimingStats:
    """Seconds per run: median, its confidence interval, and the spread of the runs."""

    median: float
    low: float
    high: float
    coverage: float
    q1: float
    q3: float
    fastest: float
    slowest: float
    runs: int

    @classmethod
    def from_samples(cls, samples: Iterable[float], confidence: float = CONFIDENCE) -> "TimingStats":
        ordered = sorted(samples)
        lo, hi, coverage = median_ci_ranks(len(ordered), confidence)
        quartiles = statistics.quantiles(ordered, n=4) if len(ordered) > 1 else ordered * 3
        return cls(
            median=statistics.median(ordered),
            low=ordered[lo],
            high=ordered[hi],
            coverage=coverage,
            q1=quartiles[0],
            q3=quartiles[2],
            fastest=ordered[0],
            slowest=ordered[-1],
            runs=len(ordered),
        )

    def overlaps(self, other: "TimingStats") -> bool:
        """Tied: the two medians' confidence intervals share at least one point."""
        return self.low <= other.high and other.low <= self.high

    @property
    def relative_spread(self) -> float:
        """Interquartile range over the median."""
        return (self.q3 - self.q1) / self.median if self.median else 0.0


def achieved_tflops(flops: int, seconds: float) -> float:
    return flops / seconds / 1e12


def device_peak(device_name: str) -> tuple[float, str] | None:
    """Dense 16-bit tensor-core peak (FLOP/s) and its description, for known GPUs."""
    for marker, peak, description in DEVICE_PEAKS:
        if marker.lower() in device_name.lower():
            return peak, description
    return None


# --------------------------------------------------------------------------- memory budget


def budget_bytes(case: PerfCase, score_bytes_per_pair: float, with_mask: bool) -> int:
    """Inputs and output, plus B·H·n·m·bytes for every score-sized tensor the code creates.

    ``score_bytes_per_pair`` is the sum over those tensors of their bytes per element
    (3 fp32 tensors → 12), measured by the memory audit at the smallest size.
    """
    inputs = case.qkv_bytes() + (case.mask_bytes() if with_mask else 0)
    return inputs + case.output_bytes() + math.ceil(score_bytes_per_pair * case.pairs)


def skip_reason(needed: int, free: int | None) -> str | None:
    """Why a size must not run, or None: its budget would not fit in free memory."""
    if free is None or needed <= free * MEMORY_HEADROOM:
        return None
    return (
        f"needs {budget.format_bytes(needed)} by its budget, more than "
        f"{MEMORY_HEADROOM:.0%} of the {budget.format_bytes(free)} free"
    )


def score_tensors(allocations: Iterable[Any], pairs: int) -> list[Any]:
    """Allocations with at least B·H·n·m elements: the score-sized tensors."""
    found = []
    for allocation in allocations:
        numel = math.prod(allocation.shape) if allocation.shape else 1
        if numel >= pairs:
            found.append(allocation)
    return found


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


# --------------------------------------------------------------------------- report


@dataclass
class Contender:
    who: str
    ran: str | None
    stats: TimingStats | None
    tflops: float | None
    peak_bytes: int | None
    budget_bytes: int | None
    score_tensors: int | None
    score_bytes: int | None
    peak_live_bytes: int | None
    skipped: str | None = None
    error: str | None = None


@dataclass
class CaseRow:
    case: PerfCase
    yours: Contender
    backends: list[Contender]
    best: str | None = None  # the fastest SDPA backend that ran
    ratio: float | None = None  # your median / best median; > 1 is slower
    tied: bool = False
    percent_of_peak: float | None = None
    check: str = "not run"  # "ok", "not run" or what differs


@dataclass
class PerfReport:
    device: str
    device_name: str
    clock: str
    peak: tuple[float, str] | None
    rows: list[CaseRow]
    warnings: list[str]
    summary: list[str]

    @property
    def passed(self) -> bool:
        """Perf never fails a grade for being slow; it fails when timed outputs are wrong."""
        return all(row.check in ("ok", "not run") for row in self.rows)

    def to_dict(self) -> dict[str, Any]:
        def contender(c: Contender) -> dict[str, Any]:
            data = asdict(c)
            data["median_s"] = c.stats.median if c.stats else None
            return data

        return {
            "device": self.device,
            "device_name": self.device_name,
            "clock": self.clock,
            "peak_flops": self.peak[0] if self.peak else None,
            "peak_description": self.peak[1] if self.peak else None,
            "confidence": CONFIDENCE,
            "passed": self.passed,
            "warnings": self.warnings,
            "summary": self.summary,
            "rows": [
                {
                    "case": asdict(row.case),
                    "flops": row.case.flops,
                    "yours": contender(row.yours),
                    "sdpa": [contender(b) for b in row.backends],
                    "best_sdpa": row.best,
                    "ratio_to_best": row.ratio,
                    "tied_with_best": row.tied,
                    "percent_of_peak": row.percent_of_peak,
                    "check": row.check,
                }
                for row in self.rows
            ],
        }


def _contender(case: PerfCase, measured: Measured, with_mask: bool) -> Contender:
    stats = TimingStats.from_samples(measured.samples) if measured.samples else None
    planned = None
    if measured.score_bytes is not None:
        planned = budget_bytes(case, measured.score_bytes / case.pairs, with_mask)
    return Contender(
        who=measured.who,
        ran=measured.ran,
        stats=stats,
        tflops=achieved_tflops(case.flops, stats.median) if stats else None,
        peak_bytes=measured.peak_bytes,
        budget_bytes=planned,
        score_tensors=measured.score_tensors,
        score_bytes=measured.score_bytes,
        peak_live_bytes=measured.peak_live_bytes,
        skipped=measured.skipped,
        error=measured.error,
    )


def check_probes(
    case: PerfCase, got: list[list[float]] | None, want: list[list[float]]
) -> str:
    """"ok", or where the timed outputs differ from the float64 probes of the same inputs."""
    if not got:
        return "not run"
    rtol, atol = PROBE_TOLERANCE.get(case.dtype, (1e-2, 1e-2))
    for run, (row_got, row_want) in enumerate(zip(got, want)):
        if len(row_got) != len(row_want):
            return f"run {run}: output has the wrong shape"
        for position, (a, b) in enumerate(zip(row_got, row_want)):
            if not abs(a - b) <= atol + rtol * abs(b):  # also catches NaN
                return (
                    f"run {run} (fresh inputs): element {position} of the probed rows is "
                    f"{a:.6g}, expected {b:.6g} (tolerance {atol:g} + {rtol:g}·|expected|)"
                )
    if len(got) != len(want):
        return f"{len(got)} timed outputs for {len(want)} runs"
    return "ok"


def build_report(
    plan: PerfPlan,
    yours: list[Measured],
    sdpa: list[Measured],
    references: list[list[list[float]]],
    device_name: str,
    warnings: Sequence[str] = (),
) -> PerfReport:
    peak = device_peak(device_name) if plan.device == "cuda" else None
    rows = []
    for index, case in enumerate(plan.cases):
        mine = next(m for m in yours if m.case == index)
        row = CaseRow(
            case=case,
            yours=_contender(case, mine, with_mask=True),
            backends=[_contender(case, m, with_mask=False) for m in sdpa if m.case == index],
        )
        _compare(row)
        if row.yours.stats and peak and case.dtype in ("bfloat16", "float16"):
            row.percent_of_peak = 100 * row.yours.tflops * 1e12 / peak[0]
        row.check = check_probes(case, mine.probes, references[index]) if mine.samples else "not run"
        rows.append(row)
    clock = CudaClock.label if plan.device == "cuda" else f"{CpuClock.label}, {plan.threads} thread(s)"
    report = PerfReport(plan.device, device_name, clock, peak, rows, list(warnings), [])
    report.summary = describe_memory(report)
    return report


def _compare(row: CaseRow) -> None:
    timed = [b for b in row.backends if b.stats]
    if not timed or not row.yours.stats:
        return
    best = min(timed, key=lambda b: b.stats.median)
    row.best = best.who
    row.ratio = row.yours.stats.median / best.stats.median
    row.tied = row.yours.stats.overlaps(best.stats)


def _backend_name(who: str) -> str:
    return {"FLASH_ATTENTION": "flash", "EFFICIENT_ATTENTION": "memory-efficient",
            "CUDNN_ATTENTION": "cuDNN", "MATH": "math"}.get(who, who)


def describe_memory(report: PerfReport) -> list[str]:
    """What the memory numbers mean, in sentences, at the largest size that ran."""
    ran = [row for row in report.rows if row.yours.score_tensors is not None]
    if not ran:
        return []
    row = max(ran, key=lambda r: (r.case.n, not r.case.causal))
    yours, case = row.yours, row.case
    sentences = []
    if yours.score_tensors:
        times = "once" if yours.score_tensors == 1 else f"{yours.score_tensors} times"
        sentences.append(
            f"Your implementation materialises an n×m score-sized tensor {times}: "
            f"{budget.format_bytes(yours.score_bytes)} at n={case.n} "
            f"({case.batch}·{case.heads}·{case.n}·{case.n} elements each)"
            + (
                f", at most {budget.format_bytes(yours.peak_live_bytes)} of intermediates alive at once."
                if yours.peak_live_bytes is not None
                else "."
            )
        )
    else:
        sentences.append(f"Your implementation creates no n×m tensor at n={case.n}.")
    for backend in row.backends:
        if backend.score_tensors is None:
            continue
        name = backend.ran or _backend_name(backend.who)
        extra = (backend.peak_bytes or 0) - case.qkv_bytes() - case.output_bytes()
        if backend.score_tensors == 0:
            sentences.append(
                f"SDPA {name} keeps O(n) extra memory: {budget.format_bytes(max(extra, 0))} "
                f"beyond inputs and output at n={case.n}."
            )
        else:
            sentences.append(
                f"SDPA {name} materialises {backend.score_tensors} score-sized tensor(s), "
                f"{budget.format_bytes(backend.score_bytes)} at n={case.n}."
            )
    skipped = [r for r in report.rows if r.yours.skipped]
    if skipped:
        first = min(skipped, key=lambda r: r.case.n)
        sentences.append(f"Skipped from {first.case.label}: {first.yours.skipped}.")
    return sentences


def render(report: PerfReport):
    """A Rich renderable: one line per size, then the memory story in words."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    where = "CPU" if report.device == "cpu" else report.device_name
    table = Table(
        title=f"Performance on {where} ({report.clock}; medians with {CONFIDENCE:.0%} intervals)",
        title_justify="left", header_style="bold",
    )
    for column in ("size", "yours", "TFLOP/s", "best SDPA", "you ÷ best", "peak / budget", "re-check"):
        table.add_column(column, justify="left" if column in ("size", "re-check") else "right")
    if report.peak:
        table.add_column("% of peak", justify="right")
    for row in report.rows:
        table.add_row(*_cells(row, report.peak is not None))
    notes = [Text(sentence) for sentence in report.summary]
    notes += [Text(f"⚠ {warning}", style="yellow") for warning in report.warnings]
    if report.device == "cpu":
        notes.append(Text("CPU numbers: no GPU claim can be read from them.", style="dim"))
    elif report.peak:
        notes.append(Text(f"Peak: {report.peak[1]}, {report.peak[0] / 1e12:.0f} TFLOP/s.", style="dim"))
    notes.append(Text(
        "Ratios of medians; 'tied' when the confidence intervals overlap. FLOPs: 4·B·H·d per "
        "attended pair (causal counts only allowed pairs).", style="dim"))
    return Group(table, *notes)


def _time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def _cells(row: CaseRow, with_peak: bool) -> list[str]:
    yours = row.yours
    size = row.case.label
    if yours.skipped or yours.error:
        reason = f"skipped: {yours.skipped}" if yours.skipped else f"error: {yours.error}"
        return [size, reason, "", "", "", "", ""] + ([""] if with_peak else [])
    stats = yours.stats
    mine = f"{_time(stats.median)} [{_time(stats.low)}–{_time(stats.high)}]"
    best = next((b for b in row.backends if b.who == row.best), None)
    best_text = (
        f"{_time(best.stats.median)} {best.ran or _backend_name(best.who)}" if best else "none ran"
    )
    if row.ratio is None:
        ratio = ""
    elif row.tied:
        ratio = f"tied ({row.ratio:.2f}×)"
    else:
        ratio = f"{row.ratio:.2f}× " + ("slower" if row.ratio > 1 else "faster")
    memory = (
        f"{budget.format_bytes(yours.peak_bytes)} / {budget.format_bytes(yours.budget_bytes)}"
        if yours.peak_bytes is not None and yours.budget_bytes is not None else ""
    )
    cells = [size, mine, f"{yours.tflops:.3g}", best_text, ratio, memory,
             "✓" if row.check == "ok" else f"✗ {row.check}"]
    if with_peak:
        cells.append(f"{row.percent_of_peak:.1f}%" if row.percent_of_peak is not None else "")
    return cells


# --------------------------------------------------------------------------- processes


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


def learner_worker(path: str, exercise: str, plan: PerfPlan) -> dict[str, Any]:
    """Inside the learner's process: load their file, time it, report plain data."""
    import importlib.util

    import torch

    torch.set_num_threads(plan.threads)
    before = _numerics_flags()
    spec = importlib.util.spec_from_file_location("learner_submission", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    target = TARGETS[exercise]
    measured = measure_target(target.adapt(getattr(module, target.function)), plan)
    after = _numerics_flags()
    changed = {key: (before[key], after[key]) for key in before if before[key] != after[key]}
    return {"measured": [asdict(m) for m in measured], "flags_changed": changed}


def sdpa_worker(plan: PerfPlan) -> dict[str, Any]:
    import torch

    torch.set_num_threads(plan.threads)
    references = reference_probes(plan)
    measured = measure_sdpa(plan)
    name = torch.cuda.get_device_name() if plan.device == "cuda" else "CPU"
    return {"measured": [asdict(m) for m in measured], "references": references,
            "device_name": name, "flags": _numerics_flags()}


def run_worker(args: list[str], timeout: float) -> dict[str, Any]:
    """Run ``python -m quizprep.grader.perf ARGS`` in a fresh process; its JSON result."""
    with tempfile.TemporaryDirectory(prefix="quizprep-perf-") as scratch:
        result_path = Path(scratch) / "result.json"
        command = [sys.executable, "-m", "quizprep.grader.perf", *args, str(result_path)]
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


def _main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m quizprep.grader.perf")
    parser.add_argument("role", choices=("sdpa", "learner"))
    parser.add_argument("plan")
    parser.add_argument("--file")
    parser.add_argument("--exercise", default="attention")
    parser.add_argument("result")
    args = parser.parse_args(argv)
    plan = PerfPlan.from_json(args.plan)
    if args.role == "sdpa":
        result = sdpa_worker(plan)
    else:
        result = learner_worker(args.file, args.exercise, plan)
    Path(args.result).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))


# --------------------------------------------------------------------------- the grader's hook


def report_from_dict(data: dict[str, Any]) -> PerfReport:
    """Rebuild a report from :meth:`PerfReport.to_dict` (what `grade --json` carries)."""

    def contender(item: dict[str, Any]) -> Contender:
        fields = {key: value for key, value in item.items() if key != "median_s"}
        fields["stats"] = TimingStats(**item["stats"]) if item["stats"] else None
        return Contender(**fields)

    rows = [
        CaseRow(
            case=PerfCase(**row["case"]),
            yours=contender(row["yours"]),
            backends=[contender(item) for item in row["sdpa"]],
            best=row["best_sdpa"],
            ratio=row["ratio_to_best"],
            tied=row["tied_with_best"],
            percent_of_peak=row["percent_of_peak"],
            check=row["check"],
        )
        for row in data["rows"]
    ]
    peak = (data["peak_flops"], data["peak_description"]) if data["peak_flops"] else None
    return PerfReport(data["device"], data["device_name"], data["clock"], peak, rows,
                      list(data["warnings"]), list(data["summary"]))


def render_data(data: dict[str, Any]):
    """The Rich table for a report carried as plain data."""
    return render(report_from_dict(data))


def headline(report: PerfReport) -> str:
    """One line for the check list: the largest size that ran, against the best backend."""
    timed = [row for row in report.rows if row.yours.stats and row.ratio is not None]
    if not timed:
        return "no size could be timed"
    row = max(timed, key=lambda r: (r.case.n, not r.case.causal))
    best = next(b for b in row.backends if b.who == row.best)
    name = best.ran or _backend_name(best.who)
    where = "CPU" if report.device == "cpu" else report.device_name
    comparison = (
        f"tied with SDPA {name}" if row.tied
        else f"{row.ratio:.2f}× {'slower' if row.ratio > 1 else 'faster'} than SDPA {name}"
    )
    return f"{where}, {row.case.label}: {_time(row.yours.stats.median)}, {comparison}"


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
