"""The learner's process for the perf phase: the correctness worker with the same start-up, plus
the requests that time the learner's function one call at a time.

Started by :mod:`.remote` through :class:`~quizprep.grader.worker_session.WorkerSession` as a script, so
it gets every protection of :mod:`quizprep.grader.learner_side.worker`, in the same order: it dies with the
grader, has a CPU-time backstop, a memory limit, the import guard that refuses ``quizprep``, the
forbidden-kernel mode around every call of the learner's function, and the seccomp filter. The
grader drives each case as requests (set up; refill run ``i``'s inputs from a seed it sends then
and time one call; hand over rows of that output), so the secret the inputs derive from never
reaches this process, and a run's seed arrives only after the learner's module was imported and
the previous run was timed. Results go back over the worker's pipe; nothing is read from a file.

The timing code (`perf_runner.py`, `perf_clocks.py`) is loaded by path like the worker's other
siblings, before the learner's file: like them it imports nothing of quizprep. It is sent each
case's shape, never the plan, and reports the free memory the grader decides skips by.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

WORKER_SCRIPT = Path(__file__).resolve().with_name("worker.py")


@dataclass(frozen=True)
class Target:
    """How the perf phase calls an exercise's function: ``adapt(fn)(*inputs, mask) -> out``, the
    inputs and output of the case's ``kind`` (see `perf_runner.CaseShape`)."""

    function: str
    adapt: Callable[[Callable], Callable]
    kind: str = "attention"


def _first_output(fn: Callable) -> Callable:
    def attend(q, k, v, mask):
        out = fn(q, k, v, mask)
        return out[0] if isinstance(out, (tuple, list)) else out

    return attend


def _causal_flag(fn: Callable) -> Callable:
    """The Triton track's flash_attention(q, k, v, causal) -> (out, lse): the mask is causal or None."""
    def attend(q, k, v, mask):
        return fn(q, k, v, causal=mask is not None)[0]

    return attend


# Tokens per page of the paged cache the perf phase builds (vLLM's default block size).
PAGE_SIZE = 16


def _paged(fn: Callable) -> Callable:
    """Each query row of (B, H, n, d) is one sequence's decode step: row i of a causal case sees
    i + 1 tokens, of a full case all n, so the output is causal (or full) attention. The keys
    and values go into a pool of pages in reverse order, which every sequence of a batch row
    shares (a shared prefix); the pool and tables are built in the call, as a server's step would."""
    def attend(q, k, v, mask):
        import torch

        batch, heads, n, head_dim = q.shape
        pages = -(-n // PAGE_SIZE)
        padded = pages * PAGE_SIZE - n

        def pool(tensor):
            tokens = torch.nn.functional.pad(tensor.transpose(1, 2), (0, 0, 0, 0, 0, padded))
            return tokens.reshape(batch * pages, PAGE_SIZE, heads, head_dim).flip(0)

        rows = torch.arange(batch * pages, device=q.device, dtype=torch.int32).reshape(batch, 1, pages)
        table = (batch * pages - 1 - rows).expand(batch, n, pages).reshape(batch * n, pages)
        lengths = (torch.arange(1, n + 1, device=q.device, dtype=torch.int32) if mask is not None
                   else torch.full((n,), n, device=q.device, dtype=torch.int32)).repeat(batch)
        out = fn(q.transpose(1, 2).reshape(batch * n, heads, head_dim), pool(k), pool(v), table, lengths)
        return out.reshape(batch, n, heads, head_dim).transpose(1, 2)

    return attend


def _rope(fn: Callable) -> Callable:
    """Queries rotated at positions 0..n-1, the half (GPT-NeoX, Llama) layout."""
    def attend(q, k, v, mask):
        import torch

        return fn(q, torch.arange(q.shape[-2], device=q.device))

    return attend


# The key block of the timed backward: FlashAttention-2's tiling, never the whole score matrix.
BACKWARD_BLOCK = 128


def _summed_gradients(fn: Callable) -> Callable:
    """dq + dk + dv (every gradient shaped like q here), so one output carries all three."""
    def attend(q, k, v, o, lse, d_o, mask):
        dq, dk, dv = fn(q, k, v, o, lse, d_o, causal=mask is not None, block_size=BACKWARD_BLOCK)
        return dq + dk + dv

    return attend


TARGETS = {"attention": Target("scaled_dot_product_attention", _first_output),
           "flash-triton": Target("flash_attention", _causal_flag),
           "paged-decode": Target("paged_decode", _paged),
           "rope": Target("apply_rope", _rope, kind="rope"),
           "attention-backward": Target("attention_backward", _summed_gradients, kind="backward")}


class PerfOps:
    """The perf requests, mixed into the correctness worker's class."""

    clocks: ModuleType  # perf_clocks.py and perf_runner.py, loaded by path before any learner code ran
    timing: ModuleType
    config: dict[str, Any]  # set by the correctness worker, as is memaudit
    memaudit: ModuleType

    def load_learner(self) -> dict[str, Any]:
        self.flags_before = self.timing.numerics_flags()
        self.runner: Any = None
        self.clock: Any = None
        return super().load_learner()  # type: ignore[misc]

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        handlers = {"perf_free": self.perf_free, "perf_case": self.perf_case, "perf_run": self.perf_run,
                    "perf_probe": self.perf_probe, "perf_flags": self.perf_flags}
        handler = handlers.get(request["op"])
        if handler is None:
            return super().handle(request)  # type: ignore[misc]
        import torch

        try:
            with torch.no_grad():
                value = handler(request)
        except torch.OutOfMemoryError:
            value = {"out_of_memory": True}
        except Exception as error:  # the learner's code failed on this size: the grader records it
            value = {"error": f"{type(error).__name__}: {error}"}
        return {"ok": True, "value": value}

    def perf_free(self, request: dict[str, Any]) -> dict[str, Any]:
        """The memory free for the next case, with the last case's tensors released and the clock
        (on GPU, its flush buffer) already allocated."""
        import torch

        device = request["device"]
        self.runner = None
        if device == "cuda":
            torch.cuda.empty_cache()
        if self.clock is None:
            self.clock = self.clocks.clock_for(device, int(self.config.get("threads", 1)))
        return {"free_bytes": self.timing.free_memory(device)}

    def perf_case(self, request: dict[str, Any]) -> dict[str, Any]:
        target = TARGETS[request["exercise"]]
        attend = target.adapt(getattr(self.learner, target.function))  # type: ignore[attr-defined]
        guard = self.guards.mode  # type: ignore[attr-defined]

        def guarded(*given: Any) -> Any:
            with guard:
                return attend(*given)

        result = self.timing.Measured(case=int(request["index"]), who="yours")
        case = self.timing.CaseShape(**request["case"])
        self.runner = self.timing.CaseRunner(guarded, case, request["device"], self.clock, self.memaudit.audit)
        self.runner.setup(int(request["seed"]), result)
        return asdict(result)

    def perf_run(self, request: dict[str, Any]) -> dict[str, Any]:
        """Refill and call in one request, so the grader's clock covers both: work done while
        refilling (a patched refill computing the output early) is seen from outside."""
        return {"seconds": self.runner.run_batch([int(seed) for seed in request["seeds"]])}

    def perf_probe(self, request: dict[str, Any]) -> dict[str, Any]:
        asked = [(int(item["position"]), [tuple(row) for row in item["rows"]], int(item["weights_seed"]))
                 for item in request["probes"]]
        return {"probes": [{"values": values, "fingerprint": mark}
                           for values, mark in self.runner.probe_batch(asked)]}

    def perf_flags(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"before": self.flags_before, "now": self.timing.numerics_flags()}


def _correctness_worker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_quizprep_worker", WORKER_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    config = json.loads(sys.argv[1])
    del sys.path[0]  # this script's directory
    base = _correctness_worker()
    base._load_sibling("sandbox.py").die_with_parent(int(config["parent"]))  # before torch is imported
    timing_code = {"clocks": base._load_sibling("perf_clocks.py"), "timing": base._load_sibling("perf_runner.py")}
    worker_class = type("PerfWorker", (PerfOps, base.Worker), timing_code)
    worker = worker_class(config)
    protections = worker.prepare()
    worker.send({"prepared": True, "sandbox": protections})
    worker.send(worker.load_learner())
    worker.serve()


if __name__ == "__main__":
    main()
