"""Layer 2 of the perf phase, torch: fresh inputs, and timing a contender on every case.

`CaseRunner` holds one contender on one case: it audits the memory of one call, then times one
call at a time on inputs refilled from a seed it is handed per run, and keeps a copy of each timed
output for the re-check. In the clean process `measure_target` drives it for every SDPA backend
(and the tests drive it for plain functions); in the learner's process the grader drives it one
request at a time (:mod:`quizprep.grader.learner_side.perf_worker`, :mod:`.remote`). Run ``i``
of every contender sees the same inputs, and no run sees the inputs of another. The clocks are in
:mod:`.clocks`.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from quizprep.grader.learner_side import memaudit
from quizprep.grader.perf.clocks import clock_for
from quizprep.grader.perf.plan import (
    FIRST_GUESS_SCORE_BYTES_PER_PAIR,
    PerfCase,
    PerfError,
    PerfPlan,
    budget_bytes,
    probe_plan,
    run_seed,
    score_tensors,
    skip_reason,
)

# The most memory the copies of one batch's outputs may take.
KEPT_OUTPUT_BYTES = 2**30
# Elements a fingerprint weighs at once (28 bytes each while it does): small under the CPU worker's
# memory limit, large on a GPU where each chunk costs launches.
FINGERPRINT_CHUNK_ELEMENTS = {"cpu": 2**20, "cuda": 2**24}
SDPA_BACKENDS = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH")
# The ATen op each backend dispatches to, to name the backend that actually ran.
_BACKEND_OPS = {
    "_scaled_dot_product_flash_attention": "flash",
    "_scaled_dot_product_flash_attention_for_cpu": "flash (CPU)",
    "_scaled_dot_product_efficient_attention": "memory-efficient",
    "_scaled_dot_product_cudnn_attention": "cuDNN",
    "_scaled_dot_product_fused_attention_overrideable": "overrideable",
}
# --------------------------------------------------------------------------- one contender, one case


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
    probes: list[list[float] | None] | None = None  # per timed run: its probe rows, None if unchecked
    fingerprints: list[float | None] | None = None  # per timed run: Σ w·out, None if unchecked
    brackets: list[float] | None = None  # per request: its runs and probes as the grader's own clock saw them
    batch_sizes: list[int] | None = None  # per request: how many timed runs it held
    skipped: str | None = None
    error: str | None = None


class Inputs:
    """q, k, v for one case, refilled in place from a seed, so every process given it agrees."""

    def __init__(self, case: PerfCase, device: str) -> None:
        import torch

        self.torch, self.case = torch, case
        dtype = getattr(torch, case.dtype)
        shape = (case.batch, case.heads, case.n, case.head_dim)
        self.q, self.k, self.v = (torch.empty(shape, dtype=dtype, device=device) for _ in range(3))
        self.generator = torch.Generator(device=device)

    def refill(self, seed: int) -> None:
        self.generator.manual_seed(seed)
        for tensor in (self.q, self.k, self.v):
            tensor.normal_(generator=self.generator)

    def reference_rows(self, rows: list[tuple[int, int, int]]) -> list[float]:
        """The output rows ``rows`` in float64, computed here from the current inputs."""
        torch = self.torch
        found = []
        for b, h, row in rows:
            q = self.q[b, h, row].double()
            keys, values = self.k[b, h].double(), self.v[b, h].double()
            if self.case.causal:
                keys, values = keys[: row + 1], values[: row + 1]
            weights = torch.softmax(keys @ q / math.sqrt(self.case.head_dim), dim=0)
            found.append(weights @ values)
        return torch.stack(found).cpu().flatten().tolist()


class CaseError(Exception):
    """A case that failed in words already fit for the report."""


class CaseRunner:
    """One contender on one case: ``attend(q, k, v, mask)`` audited once, then timed call by call.

    For the learner, ``mask`` is a bool (n, m) lower-triangular tensor on causal cases and None
    otherwise; for SDPA (``sdpa=True``) it is just True or None.
    """

    def __init__(self, attend: Callable[..., Any], plan: PerfPlan, index: int, clock: Any,
                 sdpa: bool = False) -> None:
        self.case, self.device, self.sdpa = plan.cases[index], plan.device, sdpa
        self.attend = attend
        self.inputs: Inputs | None = None  # allocated once the size is known to fit
        self.mask: Any = None
        self.held: Any = None
        self.output: Any = None  # a private copy of the last timed output
        self.kept: list[Any] = []  # the copies of the last batch's outputs
        self.read = clock.timer(self._step)

    def _call(self) -> Any:
        assert self.inputs is not None
        return self.attend(self.inputs.q, self.inputs.k, self.inputs.v, self.mask)

    def _step(self) -> None:
        self.held = self._call()

    def setup(self, seed: int, result: Measured, score_bytes_per_pair: float) -> None:
        """Skip a size that would not fit; else, on inputs of their own (never a timed run's), name
        the SDPA backend that runs and audit the memory of one call."""
        import warnings

        import torch

        result.skipped = skip_for_memory(self.case, self.device, score_bytes_per_pair, self.sdpa)
        if result.skipped:
            return
        self.inputs = Inputs(self.case, self.device)
        if self.case.causal:
            n = self.case.n
            self.mask = True if self.sdpa else torch.ones(n, n, dtype=torch.bool, device=self.device).tril()
        self.inputs.refill(seed)
        if self.sdpa:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # each refusing kernel warns why; we say it once
                    result.ran = backend_that_ran(self._call)
            except RuntimeError as error:
                result.skipped = "does not run here: " + str(error).strip().splitlines()[0]
                return
        _, report = memaudit.audit(self._call)
        scores = score_tensors(report.allocations, self.case.pairs)
        result.score_tensors = len(scores)
        result.score_bytes = sum(allocation.nbytes for allocation in scores)
        result.peak_live_bytes = report.peak_live_bytes
        input_bytes = self.case.qkv_bytes() + (0 if self.sdpa else self.case.mask_bytes())
        if self.device == "cuda":
            result.peak_bytes = _peak_gpu_bytes(self._call, input_bytes)
        else:
            result.peak_bytes = input_bytes + report.peak_live_bytes

    def fill(self, seed: int) -> None:
        assert self.inputs is not None
        self.held = self.output = None
        self.inputs.refill(seed)

    def run(self) -> float:
        """Seconds for one call on the current inputs; its output is copied before anything else
        runs, so nothing the code does afterwards (a thread, a lazy tensor) can change it."""
        seconds = self.read()
        held, self.held = self.held, None
        self.output = private_copy(held, self.case)
        return seconds

    def run_batch(self, seeds: list[int]) -> list[float]:
        """One request's runs: each refilled from its seed, timed, and its output kept for the re-check."""
        self.kept, samples = [], []
        for seed in seeds:
            self.fill(seed)
            samples.append(self.run())
            self.kept.append(self.output)
        return samples

    def probe(self, rows: list[tuple[int, int, int]], weights_seed: int) -> tuple[list[float], float]:
        """The rows ``rows`` of the last timed output, and its fingerprint under ``weights_seed``."""
        import torch
        from torch.utils._python_dispatch import _disable_current_modes

        with torch._C.DisableTorchFunction(), _disable_current_modes():
            picked = [self.output[b, h, row].double().flatten() for b, h, row in rows]
            return torch.stack(picked).flatten().tolist(), fingerprint(self.output, weights_seed)[0]

    def probe_batch(self, asked: list[tuple[int, list[tuple[int, int, int]], int]]) -> list[tuple[list[float], float]]:
        """`probe` for each (position in the last batch, rows, weights seed)."""
        found = []
        for position, rows, weights_seed in asked:
            self.output = self.kept[position]
            found.append(self.probe(rows, weights_seed))
        return found


def fingerprint(out: Any, weights_seed: int) -> tuple[float, float]:
    """Σ w·out over the whole output with normal weights drawn from ``weights_seed``, and
    √Σ(w·out)², the scale its rounding errors are judged by; float64, summed on the output's device
    in chunks of bounded memory and read back once (a GPU sync per chunk cost milliseconds, which
    the grader's clock counted against the learner). Asked for only after a run, it makes code that
    skipped work in the timed call do all of it where the grader's clock still sees it."""
    import torch

    generator = torch.Generator(device=out.device).manual_seed(weights_seed)
    flat = out.reshape(-1)
    chunk = FINGERPRINT_CHUNK_ELEMENTS.get(out.device.type, FINGERPRINT_CHUNK_ELEMENTS["cpu"])
    sums = torch.zeros(2, dtype=torch.float64, device=out.device)
    for start in range(0, flat.numel(), chunk):
        block = flat[start:start + chunk]
        weights = torch.randn(block.shape, generator=generator, device=out.device, dtype=torch.float32)
        weighted = block.double() * weights.double()
        sums += torch.stack((weighted.sum(), weighted.square().sum()))
    total, squares = sums.tolist()
    return total, math.sqrt(squares)


def private_copy(out: Any, case: PerfCase) -> Any:
    """A copy of a timed output on its device, made with every torch function and dispatch mode off."""
    import torch
    from torch.utils._python_dispatch import _disable_current_modes

    if type(out) is not torch.Tensor:
        raise TypeError(f"returned {type(out).__module__}.{type(out).__qualname__}, not a plain torch.Tensor")
    expected = (case.batch, case.heads, case.n, case.head_dim)
    with torch._C.DisableTorchFunction(), _disable_current_modes():
        if tuple(out.shape) != expected:
            raise ValueError(f"returned shape {tuple(out.shape)}, expected {expected}")
        return out.detach().clone()


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


def skip_for_memory(case: PerfCase, device: str, score_bytes_per_pair: float, sdpa: bool) -> str | None:
    """Why this size must not run here, or None. The budget scales the score-sized bytes per pair
    the memory audit saw at the previous size."""
    return skip_reason(budget_bytes(case, score_bytes_per_pair, with_mask=not sdpa), _free_memory(device))


def _peak_gpu_bytes(call: Callable[[], Any], inputs_bytes: int) -> int:
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    out = call()
    torch.cuda.synchronize()
    del out
    return torch.cuda.max_memory_allocated() - before + inputs_bytes


# --------------------------------------------------------------------------- every case


def measure_target(
    attend: Callable[[Any, Any, Any, Any], Any],
    plan: PerfPlan,
    who: str = "yours",
    sdpa: bool = False,
) -> list[Measured]:
    """Time ``attend(q, k, v, mask)`` on every case in this process (see `measure_cases`)."""
    clock = clock_for(plan)
    return measure_cases(lambda index: CaseRunner(attend, plan, index, clock, sdpa), plan, who)


def measure_cases(make_runner: Callable[[int], Any], plan: PerfPlan, who: str) -> list[Measured]:
    """Every case, smallest first, each through the runner ``make_runner(index)`` (a `CaseRunner`
    here, or one in the learner's process driven by requests). A size whose budget would not fit
    in free memory is skipped; a size the code fails on records the error and the others go on."""
    import torch

    results: list[Measured] = []
    score_bytes_per_pair = FIRST_GUESS_SCORE_BYTES_PER_PAIR
    for index in sorted(range(len(plan.cases)), key=lambda i: plan.cases[i].n):
        result = Measured(case=index, who=who)
        results.append(result)
        try:
            with torch.no_grad():
                measure_case(make_runner(index), plan, index, result, score_bytes_per_pair)
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


def measure_case(runner: Any, plan: PerfPlan, index: int, result: Measured, score_bytes_per_pair: float) -> None:
    """Set up, warm up and time one case, a batch of runs per request (:func:`runs_per_request`).
    The probed runs' rows and fingerprints are asked for after their batch's clock stopped; the
    wall clock around each batch, and around its probes, is kept beside the runner's own readings."""
    runner.setup(run_seed(plan.seed, index, "setup"), result, score_bytes_per_pair)
    if result.skipped:
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


def numerics_flags() -> dict[str, Any]:
    """The global switches that change how fast (and how exactly) torch computes."""
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
