"""One contender on one case of the perf phase, timed call by call: stdlib and torch only, as it
runs in the learner's process.

`CaseRunner` audits the memory of one call, then times one call at a time on inputs refilled from
a seed it is handed per run, and keeps a copy of each timed output for the re-check. In the
learner's process the perf worker (`perf_worker.py`, which loads this file by path) drives it one
request at a time for the grader; in the clean process the grader's side
(:mod:`quizprep.grader.perf.measure`, which imports it by name) drives it for every SDPA backend.
It never sees the secret seed or the memory budget: the grader hands it each run's seed, and
decides from the free memory it reports whether a size runs at all. Run ``i`` of every contender
sees the same inputs, and no run sees the inputs of another. The clocks are in `perf_clocks.py`.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

# Elements a fingerprint weighs at once (28 bytes each while it does): small under the CPU worker's
# memory limit, large on a GPU where each chunk costs launches.
FINGERPRINT_CHUNK_ELEMENTS = {"cpu": 2**20, "cuda": 2**24}
# The ATen op each backend dispatches to, to name the backend that actually ran.
_BACKEND_OPS = {
    "_scaled_dot_product_flash_attention": "flash",
    "_scaled_dot_product_flash_attention_for_cpu": "flash (CPU)",
    "_scaled_dot_product_efficient_attention": "memory-efficient",
    "_scaled_dot_product_cudnn_attention": "cuDNN",
    "_scaled_dot_product_fused_attention_overrideable": "overrideable",
}


@dataclass(frozen=True)
class CaseShape:
    """One size: self-attention with n = m, inputs (B, H, n, d). The grader's `PerfCase` adds
    what needs its budget code: the label, FLOPs and bytes."""

    batch: int
    heads: int
    n: int
    head_dim: int
    causal: bool
    dtype: str
    # What is timed: "attention" (q, k, v -> the attention output), "rope" (q rotated at positions
    # 0..n-1) or "backward" (q, k, v, o, lse, dO -> dq + dk + dv). Every output is shaped like q.
    kind: str = "attention"

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """Of q, k, v and the output."""
        return (self.batch, self.heads, self.n, self.head_dim)

    @property
    def pairs(self) -> int:
        """Elements of one score-sized tensor, B·H·n·m."""
        return self.batch * self.heads * self.n * self.n


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
    """q, k, v for one case, refilled in place from a seed, so every process given it agrees; for
    the backward, also dO and what a forward pass saves (o and the rows' log-sum-exp)."""

    def __init__(self, case: CaseShape, device: str) -> None:
        import torch

        self.case = case
        dtype = getattr(torch, case.dtype)
        self.q = torch.empty(case.shape, dtype=dtype, device=device)
        # RoPE rotates q alone: k and v stay empty (0 elements) rather than be filled for nothing.
        rows = 0 if case.kind == "rope" else case.n
        self.k, self.v = (torch.empty(case.shape[:2] + (rows, case.head_dim), dtype=dtype, device=device)
                          for _ in range(2))
        self.d_o = torch.empty(case.shape, dtype=dtype, device=device) if case.kind == "backward" else None
        self.o: Any = None
        self.lse: Any = None
        self.generator = torch.Generator(device=device)

    @property
    def given(self) -> tuple[Any, ...]:
        """The tensors a contender is called with, before the mask."""
        if self.d_o is None:
            return self.q, self.k, self.v
        return self.q, self.k, self.v, self.o, self.lse, self.d_o

    def refill(self, seed: int) -> None:
        self.generator.manual_seed(seed)
        for tensor in (self.q, self.k, self.v, self.d_o):
            if tensor is not None:
                tensor.normal_(generator=self.generator)
        if self.d_o is not None:  # not timed: the backward starts from what the forward saved
            self.o, self.lse = saved_forward(self.q, self.k, self.v, self.case.causal)


# Queries per block of the untimed forward, so its scores never take more than block·m floats.
_FORWARD_QUERY_BLOCK = 256


def saved_forward(q: Any, k: Any, v: Any, causal: bool) -> tuple[Any, Any]:
    """o and the float32 log-sum-exp of each query's scaled scores, a block of queries at a time."""
    import torch

    n = q.shape[-2]
    o = torch.empty_like(q)
    lse = torch.empty(q.shape[:-1], dtype=torch.float32, device=q.device)
    keys, values = k.float().transpose(-2, -1), v.float()
    for start in range(0, n, _FORWARD_QUERY_BLOCK):
        stop = min(start + _FORWARD_QUERY_BLOCK, n)
        scores = (q[..., start:stop, :].float() @ keys) * q.shape[-1] ** -0.5
        if causal:
            rows = torch.arange(start, stop, device=q.device).unsqueeze(-1)
            scores.masked_fill_(torch.arange(n, device=q.device) > rows, float("-inf"))
        lse[..., start:stop] = torch.logsumexp(scores, dim=-1)
        o[..., start:stop, :] = (torch.softmax(scores, dim=-1) @ values).to(q.dtype)
    return o, lse


class CaseRunner:
    """One contender on one case: ``attend(*inputs.given, mask)`` audited once, then timed call by call.

    For the learner, ``mask`` is a bool (n, m) lower-triangular tensor on causal cases and None
    otherwise; for SDPA (``sdpa=True``) it is just True or None. ``audit`` is `memaudit.audit`,
    handed in by whoever loaded both modules (by path in the learner's process, by name elsewhere).
    """

    def __init__(self, attend: Callable[..., Any], case: CaseShape, device: str, clock: Any,
                 audit: Callable[..., Any], sdpa: bool = False) -> None:
        self.case, self.device, self.sdpa = case, device, sdpa
        self.attend, self.audit = attend, audit
        self.inputs: Inputs | None = None  # allocated once the size is known to fit
        self.mask: Any = None
        self.held: Any = None
        self.output: Any = None  # a private copy of the last timed output
        self.kept: list[Any] = []  # the copies of the last batch's outputs
        self.read = clock.timer(self._step)

    def _call(self) -> Any:
        assert self.inputs is not None
        return self.attend(*self.inputs.given, self.mask)

    def _step(self) -> None:
        self.held = self._call()

    def free_bytes(self) -> int | None:
        """The memory free for this case before it allocates anything, for the grader to decide by
        its budget whether the size runs at all (None: not known here)."""
        return free_memory(self.device)

    def setup(self, seed: int, result: Measured) -> None:
        """On inputs of their own (never a timed run's), name the SDPA backend that runs and audit
        the memory of one call."""
        import warnings

        import torch

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
        _, report = self.audit(self._call)
        scores = score_tensors(report.allocations, self.case.pairs)
        result.score_tensors = len(scores)
        result.score_bytes = sum(allocation.nbytes for allocation in scores)
        result.peak_live_bytes = report.peak_live_bytes
        given = (*self.inputs.given, self.mask)  # SDPA's mask is a flag, no tensor
        input_bytes = sum(tensor.nbytes for tensor in given if isinstance(tensor, torch.Tensor))
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


def private_copy(out: Any, case: CaseShape) -> Any:
    """A copy of a timed output on its device, made with every torch function and dispatch mode off."""
    import torch
    from torch.utils._python_dispatch import _disable_current_modes

    if type(out) is not torch.Tensor:
        raise TypeError(f"returned {type(out).__module__}.{type(out).__qualname__}, not a plain torch.Tensor")
    expected = case.shape
    with torch._C.DisableTorchFunction(), _disable_current_modes():
        if tuple(out.shape) != expected:
            raise ValueError(f"returned shape {tuple(out.shape)}, expected {expected}")
        return out.detach().clone()


def free_memory(device: str) -> int | None:
    """Bytes free on ``device`` to this process: on CPU within its address-space limit (the worker
    has one), None where that cannot be read."""
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


def _peak_gpu_bytes(call: Callable[[], Any], inputs_bytes: int) -> int:
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    out = call()
    torch.cuda.synchronize()
    del out
    return torch.cuda.max_memory_allocated() - before + inputs_bytes


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


def score_tensors(allocations: Iterable[Any], pairs: int) -> list[Any]:
    """Allocations with at least B·H·n·m elements: the score-sized tensors."""
    found = []
    for allocation in allocations:
        numel = math.prod(allocation.shape) if allocation.shape else 1
        if numel >= pairs:
            found.append(allocation)
    return found
