"""The clean process of the perf phase: the baselines of the case's kind (every SDPA backend, with
autograd for the backward; Hugging Face Llama's rotate_half for RoPE) timed on the secret inputs,
and the float64 probes the learner's timed outputs are checked against. The learner's code never
runs here, and this process ends before the learner's starts.

Run as ``python -m quizprep.grader.perf.baseline PARENT_PID CPU_SECONDS`` with the plan (its secret
seed included) on stdin; the result is one JSON object on stdout (a pipe only the grader reads).
"""
from __future__ import annotations

import json
import math
import statistics
import sys
import time
from dataclasses import asdict
from typing import Any, Callable

from quizprep.grader.learner_side import sandbox
from quizprep.grader.learner_side.perf_runner import Inputs, Measured, fingerprint, numerics_flags
from quizprep.grader.perf.measure import SDPA_BACKENDS, measure_target
from quizprep.grader.perf.plan import PerfPlan, probe_plan, run_seed


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


def sdpa_backward(backend: str | None) -> Callable[..., Any]:
    """dq + dk + dv by autograd of SDPA restricted to one backend: its forward and its backward,
    since autograd has no backward without the forward's graph (the saved o and lse go unused)."""
    import torch

    forward = sdpa_attend(backend)

    def backward(q, k, v, o, lse, d_o, causal):
        with torch.enable_grad():
            q, k, v = (tensor.detach().requires_grad_() for tensor in (q, k, v))
            dq, dk, dv = torch.autograd.grad(forward(q, k, v, causal), (q, k, v), d_o)
        return dq + dk + dv

    return backward


def rotate_half_rope(q: Any, k: Any, v: Any, mask: Any) -> Any:
    """Hugging Face transformers' Llama RoPE (LlamaRotaryEmbedding and apply_rotary_pos_emb's
    rotate_half, models/llama/modeling_llama.py): cos and sin in float32, cast to q's dtype."""
    import torch

    n, d = q.shape[-2], q.shape[-1]
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, device=q.device, dtype=torch.float32) / d))
    freqs = torch.outer(torch.arange(n, device=q.device, dtype=torch.float32), inv_freq)
    angles = torch.cat((freqs, freqs), dim=-1)
    rotated = torch.cat((-q[..., d // 2:], q[..., : d // 2]), dim=-1)
    return q * angles.cos().to(q.dtype) + rotated * angles.sin().to(q.dtype)


def baselines(kind: str) -> list[tuple[str, Callable[..., Any], bool]]:
    """(name, callable, is SDPA) for every baseline a case of ``kind`` is timed against."""
    if kind == "rope":
        return [("rotate_half", rotate_half_rope, False)]
    make = sdpa_backward if kind == "backward" else sdpa_attend
    return [(backend, make(backend), True) for backend in SDPA_BACKENDS]


def fingerprinted_baseline(kind: str) -> Callable[..., Any]:
    """The baseline whose whole output the learner's is compared with (SDPA: PyTorch's own backend)."""
    if kind == "rope":
        return rotate_half_rope
    return (sdpa_backward if kind == "backward" else sdpa_attend)(None)


def reference_probes(plan: PerfPlan) -> list[list[list[float] | None]]:
    """For every case and timed run, the float64 rows of that run's inputs that will be checked
    (None for a run that is not checked)."""
    return references(plan, fingerprints=False)[0]


def references(plan: PerfPlan, fingerprints: bool = True) -> tuple[list[Any], list[Any]]:
    """The probe rows, as `reference_probes`, and for every checked run [fingerprint, scale] of
    SDPA's output on that run's inputs with that run's weights (see `perf_runner.fingerprint`)."""
    rows_by_case, marks_by_case = [], []
    for index, case in enumerate(plan.cases):
        inputs = Inputs(case, plan.device)
        rows_by_run: list[list[float] | None] = []
        marks_by_run: list[list[float] | None] = []
        for run, rows in enumerate(probe_plan(plan.seed, index, case, plan.runs)):
            rows_by_run.append(None)
            marks_by_run.append(None)
            if rows is None:
                continue
            inputs.refill(run_seed(plan.seed, index, run))
            rows_by_run[-1] = reference_rows(inputs, rows)
            if fingerprints:
                out = fingerprinted_baseline(case.kind)(*inputs.given, case.causal or None)
                marks_by_run[-1] = list(fingerprint(out, run_seed(plan.seed, index, f"weights:{run}")))
        rows_by_case.append(rows_by_run)
        marks_by_case.append(marks_by_run)
    return rows_by_case, marks_by_case


def reference_rows(inputs: Inputs, rows: list[tuple[int, int, int]]) -> list[float]:
    """The output rows ``rows`` in float64, computed here from the current inputs."""
    kind = inputs.case.kind
    return (rope_rows if kind == "rope" else gradient_rows if kind == "backward" else attention_rows)(inputs, rows)


def rope_rows(inputs: Inputs, rows: list[tuple[int, int, int]]) -> list[float]:
    """Query rows rotated at their own position, by float64 rotation matrices."""
    import torch

    from quizprep.grader.exercises.rope import HALF, reference_rope

    picked = torch.stack([inputs.q[b, h, row] for b, h, row in rows]).cpu()  # (rows, d): one position each
    positions = torch.tensor([row for _, _, row in rows])
    return reference_rope(picked, positions, 10000.0, HALF, picked.shape[-1]).flatten().tolist()


def gradient_rows(inputs: Inputs, rows: list[tuple[int, int, int]]) -> list[float]:
    """Rows of dq + dk + dv by float64 autograd of the attention of each probed head."""
    import torch

    assert inputs.d_o is not None, "a backward case's inputs hold dO"
    summed: dict[tuple[int, int], Any] = {}
    for b, h, _ in rows:
        if (b, h) not in summed:
            with torch.enable_grad():
                q, k, v = (t[b, h].double().requires_grad_() for t in (inputs.q, inputs.k, inputs.v))
                scores = q @ k.T / math.sqrt(inputs.case.head_dim)
                if inputs.case.causal:
                    scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), float("-inf"))
                out = torch.softmax(scores, dim=-1) @ v
                grads = torch.autograd.grad(out, (q, k, v), inputs.d_o[b, h].double())
            summed[b, h] = sum(grads)
    return torch.stack([summed[b, h][row] for b, h, row in rows]).cpu().flatten().tolist()


def attention_rows(inputs: Inputs, rows: list[tuple[int, int, int]]) -> list[float]:
    """Rows of the attention output, each from its query, keys and values."""
    import torch

    found = []
    for b, h, row in rows:
        q = inputs.q[b, h, row].double()
        keys, values = inputs.k[b, h].double(), inputs.v[b, h].double()
        if inputs.case.causal:
            keys, values = keys[: row + 1], values[: row + 1]
        weights = torch.softmax(keys @ q / math.sqrt(inputs.case.head_dim), dim=0)
        found.append(weights @ values)
    return torch.stack(found).cpu().flatten().tolist()


def measure_sdpa(plan: PerfPlan) -> list[Measured]:
    """Every baseline of the plan's kind on every case (SDPA backends that cannot run say why)."""
    results: list[Measured] = []
    kind = plan.cases[0].kind if plan.cases else "attention"
    for who, attend, sdpa in baselines(kind):
        results += measure_target(attend, plan, who=who, sdpa=sdpa)
    return results


# Forward passes timed per backward case; their median is the allowance.
FORWARD_TIMINGS = 3


def forward_seconds(plan: PerfPlan) -> list[float]:
    """Per case, the median seconds of the forward pass a backward case's refill runs (o and lse
    for the learner, untimed by the runner but inside the grader's clock); 0 for other kinds."""
    import torch

    found = []
    for index, case in enumerate(plan.cases):
        if case.kind != "backward":
            found.append(0.0)
            continue
        inputs, samples = Inputs(case, plan.device), []
        for run in range(FORWARD_TIMINGS):
            started = time.perf_counter()
            inputs.refill(run_seed(plan.seed, index, f"forward:{run}"))
            if plan.device == "cuda":
                torch.cuda.synchronize()
            samples.append(time.perf_counter() - started)
        found.append(statistics.median(samples))
    return found


def sdpa_worker(plan: PerfPlan) -> dict[str, Any]:
    import torch

    torch.set_num_threads(plan.threads)
    rows, marks = references(plan)
    measured = measure_sdpa(plan)
    name = torch.cuda.get_device_name() if plan.device == "cuda" else "CPU"
    return {"measured": [asdict(m) for m in measured], "references": rows, "fingerprints": marks,
            "device_name": name, "flags": numerics_flags(), "forward_seconds": forward_seconds(plan)}


def main(argv: list[str]) -> int:
    parent, cpu_seconds = int(argv[0]), float(argv[1])
    plan = PerfPlan.from_json(sys.stdin.read())  # the secret seed never appears in argv
    sandbox.die_with_parent(parent)
    sandbox.limit_cpu(cpu_seconds)
    result = sdpa_worker(plan)
    sys.stdout.write(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
