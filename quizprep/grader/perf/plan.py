"""Layer 1 of the perf phase, pure Python: the sizes to run, the FLOP and memory budget of each,
the median with a distribution-free confidence interval, ties, and what the hardware allows."""
from __future__ import annotations

import hashlib
import json
import math
import os
import random
import statistics
from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

from quizprep import budget
from quizprep.grader.learner_side.perf_runner import CaseShape

CONFIDENCE = 0.95
# Only this fraction of free memory is planned for: allocator fragmentation and the
# clock's own buffers need the rest.
MEMORY_HEADROOM = 0.8
PROBES_PER_RUN = 8
# The share of timed runs whose outputs are re-checked; which ones is drawn from the secret seed,
# and the learner's process learns it only after the run's output is in (so every run must be right).
PROBED_FRACTION = 0.5
# On GPU, each request to the learner's process holds runs lasting about this long, so the cost
# of a request (pipe round trip, launches, synchronising: milliseconds) is small beside them.
GPU_BATCH_SECONDS = 0.05
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

# Bounds no honest run can beat, to reject forged timings. CPU: four times the fp32 peak of an
# AVX-512 core with two FMA units at 4 GHz (2·16·2·4e9 = 256 GFLOP/s) per core of this machine.
# A GPU missing from DEVICE_PEAKS: twice the fastest dense 16-bit peak listed there.
CPU_FLOPS_PER_CORE_BOUND = 1e12
UNKNOWN_GPU_PEAK_FACTOR = 2.0

# Tolerances of the re-check on timed inputs, against a float64 probe of the same rows.
# Wider than the correctness checks: long rows (m up to 16384) in 16-bit types.
PROBE_TOLERANCE = {"float32": (1e-4, 1e-4), "bfloat16": (5e-2, 5e-2), "float16": (1e-2, 1e-2)}


class PerfError(RuntimeError):
    """The perf phase could not produce numbers; the message says why."""


# --------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class PerfCase(CaseShape):
    """One size (its fields are `CaseShape`'s, all the learner's process is sent), with what the
    grader plans and reports by: its label, FLOPs and bytes."""

    @property
    def label(self) -> str:
        mask = "causal" if self.causal else "full"
        return f"{self.dtype} B={self.batch} H={self.heads} n={self.n} d={self.head_dim} {mask}"

    @property
    def flops(self) -> int:
        """The work of the case's kind: attention's two matmuls; the backward's five (2.5× the
        forward, as FlashAttention-2 counts it); a rotation's two products and a sum per element."""
        if self.kind == "rope":
            return 3 * self.batch * self.heads * self.n * self.head_dim
        forward = budget.attention_flops(self.batch, self.heads, self.n, self.n, self.head_dim, self.causal)
        return 5 * forward // 2 if self.kind == "backward" else forward

    def qkv_bytes(self) -> int:
        """Every input shaped like q: q, k, v, and for the backward also o and dO; RoPE's q alone."""
        return {"rope": 1, "backward": 5}.get(self.kind, 3) * self.output_bytes()

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
    seed: int = 0  # the secret every input derives from; never sent to the learner's process
    threads: int = 1  # CPU only; both contenders use the same count
    batch_seconds: float = 0.0  # the time one request's runs should last; 0: one run per request

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "cases": [asdict(case) for case in self.cases]})

    @classmethod
    def from_json(cls, text: str) -> PerfPlan:
        data = json.loads(text)
        data["cases"] = tuple(PerfCase(**case) for case in data["cases"])
        return cls(**data)


def gpu_plan(seed: int = 0, runs: int = 20, full: bool = False, kind: str = "attention", batch: int = 4,
             longest: int = 16384) -> PerfPlan:
    """``full``: bf16 and fp16, B=4, H=16, d ∈ {64, 128}, n from 512 to 16384, causal and not (48
    cases). By default the six that tell the story within a minute: bf16, d=128, n ∈ {1024, 4096,
    16384}, causal and not. ``batch`` and ``longest`` make it smaller for code that loops in Python."""
    cases = tuple(
        PerfCase(batch, 16, n, head_dim, causal, dtype, kind)
        for dtype in (("bfloat16", "float16") if full else ("bfloat16",))
        for head_dim in ((64, 128) if full else (128,))
        for causal in (False, True)
        for n in ((512, 1024, 2048, 4096, 8192, 16384) if full else (1024, 4096, 16384))
        if n <= longest
    )
    return PerfPlan("cuda", cases, runs=runs, warmup=5, seed=seed, batch_seconds=GPU_BATCH_SECONDS)


def cpu_plan(seed: int = 0, runs: int = 20, sizes: Sequence[int] = (256, 512, 1024),
             kind: str = "attention", batch: int = 2) -> PerfPlan:
    """fp32, B=2, H=4, d=64: small enough for a laptop core or two."""
    cases = tuple(
        PerfCase(batch, 4, n, 64, causal, "float32", kind) for causal in (False, True) for n in sizes
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
    def from_samples(cls, samples: Iterable[float], confidence: float = CONFIDENCE) -> TimingStats:
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

    def overlaps(self, other: TimingStats) -> bool:
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


def flops_bound(device: str, device_name: str) -> tuple[float, str]:
    """FLOP/s that no run on this device can exceed, and where the figure comes from."""
    if device == "cpu":
        cores = os.cpu_count() or 1
        each = f"{CPU_FLOPS_PER_CORE_BOUND / 1e12:g} TFLOP/s each"
        return CPU_FLOPS_PER_CORE_BOUND * cores, f"{cores} CPU core(s) at {each}"
    known = device_peak(device_name)
    if known:
        return known
    fastest = max(peak for _, peak, _ in DEVICE_PEAKS)
    return UNKNOWN_GPU_PEAK_FACTOR * fastest, f"twice the fastest GPU peak known here ({device_name})"


# --------------------------------------------------------------------------- secret inputs


def run_seed(secret: int, case: int, run: int | str) -> int:
    """The seed of one run's inputs: a keyed hash, so the seeds a process is given tell it nothing
    about the secret or about any other run's inputs."""
    digest = hashlib.sha256(f"quizprep-perf:{secret}:{case}:{run}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def probe_plan(secret: int, index: int, case: PerfCase, runs: int) -> list[list[tuple[int, int, int]] | None]:
    """For each timed run, the (batch, head, row) triples re-checked, or None for an unchecked run."""
    rng = random.Random(run_seed(secret, index, "probes"))
    probed = set(rng.sample(range(runs), max(1, math.ceil(runs * PROBED_FRACTION))))
    return [
        [(rng.randrange(case.batch), rng.randrange(case.heads), rng.randrange(case.n)) for _ in range(PROBES_PER_RUN)]
        if run in probed else None
        for run in range(runs)
    ]


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
