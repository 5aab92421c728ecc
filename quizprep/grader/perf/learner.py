"""The learner's side of the perf phase: load their file, time it, report plain data."""
from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from quizprep.grader.perf.measure import _numerics_flags, measure_target, sdpa_worker
from quizprep.grader.perf.phase import TARGETS
from quizprep.grader.perf.plan import PerfPlan


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


def _main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m quizprep.grader.perf.learner")
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
