"""The `grade --perf` table for an exercise's example solution (attention by default): CPU here, GPU where CUDA is.

    python benchmarks/perf_table.py [--exercise attention|attention-backward|flash-triton|paged-decode|rope]
                                    [--device auto|cpu|cuda] [--sizes 256 512 1024] [--full] [--width N] [--json]

On CPU the plan is fp32, B=2, H=4, d=64 (sizes adjustable); on CUDA it is the grader's default
plan, or with --full its full one (bf16/fp16, B=4, H=16, d ∈ {64, 128}, n = 512 … 16384, causal
and not). The table is printed at --width columns (default 80, as a terminal shows it).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from quizprep.grader import perf
from quizprep.grader.device import policy_for
from quizprep.grader.learner_side.perf_worker import TARGETS
from quizprep.grader.perf.phase import default_plan

SOLUTIONS = Path(__file__).resolve().parents[1] / "tests" / "solutions"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exercise", choices=sorted(TARGETS), default="attention")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024], help="CPU sequence lengths")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--full", action="store_true", help="CUDA: all 48 sizes, as grade --perf full")
    parser.add_argument("--width", type=int, default=80, help="columns the table is printed at")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    device = policy_for(args.device).perf
    if device == "cuda":
        plan = dataclasses.replace(default_plan(args.exercise, device, args.full), runs=args.runs)
    else:
        plan = perf.cpu_plan(runs=args.runs, sizes=args.sizes, kind=TARGETS[args.exercise].kind)
    solution = SOLUTIONS / f"{args.exercise.replace('-', '_')}.py"
    started = time.perf_counter()
    report = perf.run_perf(solution, args.exercise, plan=plan, device=device, timeout=3600)
    elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps({**report.to_dict(), "wall_seconds": elapsed}))
    else:
        from rich.console import Console

        console = Console(width=args.width)
        console.print(perf.render(report))
        console.print(f"[dim]whole perf phase: {elapsed:.1f} s[/]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
