"""The clean process of the perf phase: every SDPA backend timed on the secret inputs, and the
float64 probes the learner's timed outputs are checked against. The learner's code never runs
here, and this process ends before the learner's starts.

Run as ``python -m quizprep.grader.perf.baseline PARENT_PID CPU_SECONDS`` with the plan (its secret
seed included) on stdin; the result is one JSON object on stdout (a pipe only the grader reads).
"""
from __future__ import annotations

import json
import math
import sys
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
                out = sdpa_attend(None)(inputs.q, inputs.k, inputs.v, case.causal or None)
                marks_by_run[-1] = list(fingerprint(out, run_seed(plan.seed, index, f"weights:{run}")))
        rows_by_case.append(rows_by_run)
        marks_by_case.append(marks_by_run)
    return rows_by_case, marks_by_case


def reference_rows(inputs: Inputs, rows: list[tuple[int, int, int]]) -> list[float]:
    """The output rows ``rows`` in float64, computed here from the current inputs."""
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
    """Every SDPA backend on every case (those that cannot run say why)."""
    results: list[Measured] = []
    for backend in SDPA_BACKENDS:
        results += measure_target(sdpa_attend(backend), plan, who=backend, sdpa=True)
    return results


def sdpa_worker(plan: PerfPlan) -> dict[str, Any]:
    import torch

    torch.set_num_threads(plan.threads)
    rows, marks = references(plan)
    measured = measure_sdpa(plan)
    name = torch.cuda.get_device_name() if plan.device == "cuda" else "CPU"
    return {"measured": [asdict(m) for m in measured], "references": rows, "fingerprints": marks,
            "device_name": name, "flags": numerics_flags()}


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
