"""The grader's wall time per exercise, on the example solution, as a ratio to `import torch`.

Both are timed here, in the same script, as fresh processes: the ratio is what a learner
feels, and it cancels most of the machine's speed. Goal: at most 3× `python -c "import torch"`.
With ``--device cuda`` (a GPU machine) every grade runs with that device and the goal is 2×;
``--device auto`` there grades as a learner's default does (checks on the CPU, the device probe
on the GPU).

    python benchmarks/grader_walltime.py [--repeat N] [--json] [--device auto|cpu|cuda] [--only STEM ...]
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "tests" / "solutions"
GOAL = 3.0
GPU_GOAL = 2.0  # issue 18: grading a correct file on a GPU machine


def wall_time(argv: list[str]) -> float:
    started = time.perf_counter()
    completed = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        tail = completed.stdout.decode(errors="replace")[-2000:]
        raise SystemExit(f"{' '.join(argv[:3])} … failed (exit {completed.returncode}):\n{tail}")
    return elapsed


def interleaved_medians(commands: dict[str, list[str]], repeat: int) -> dict[str, float]:
    """Median wall time of each command, the commands taking turns within every round so
    that a burst of load from elsewhere on the machine hits the baseline and the grader alike."""
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, argv in commands.items():
            samples[name].append(wall_time(argv))
    return {name: statistics.median(times) for name, times in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median); default 3")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="the grade's --device; 'cuda' needs a GPU (default: auto)")
    parser.add_argument("--only", nargs="+", metavar="STEM", help="grade only these example solutions (e.g. mha)")
    args = parser.parse_args()
    gpu = gpu_name()
    if args.device == "cuda" and gpu is None:
        raise SystemExit("--device cuda: PyTorch sees no CUDA device here")
    goal = GPU_GOAL if gpu and args.device != "cpu" else GOAL

    commands = {"import torch": [sys.executable, "-c", "import torch"]}
    for solution in sorted(SOLUTIONS.glob("*.py")):
        if args.only and solution.stem not in args.only:
            continue
        # `quizprep grade FILE` itself: its process's exit is part of what a learner waits for
        commands[solution.stem] = [sys.executable, "-m", "quizprep", "grade", str(solution), "--json",
                                   "--device", args.device]
    medians = interleaved_medians(commands, args.repeat)
    baseline = medians.pop("import torch")
    rows = []
    for exercise, seconds in medians.items():
        rows.append({"exercise": exercise, "seconds": seconds, "ratio": seconds / baseline,
                     "within_goal": seconds / baseline <= goal})
    result = {
        "machine": f"{platform.machine()}, {platform.processor() or 'unknown CPU'}, "
                   f"{len(__import__('os').sched_getaffinity(0))} cores available",
        "gpu": gpu,
        "device": args.device,
        "python": platform.python_version(),
        "import_torch_seconds": baseline,
        "repeat": args.repeat,
        "goal_ratio": goal,
        "exercises": rows,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"python -c 'import torch': {baseline:.2f} s (median of {args.repeat}); grade --device {args.device}"
          f" on {gpu or 'CPU only'}")
    print(f"{'exercise':<12} {'grade (s)':>10} {'÷ import torch':>15}")
    for row in rows:
        mark = "" if row["within_goal"] else f"  over the {goal:g}× goal"
        print(f"{row['exercise']:<12} {row['seconds']:>10.2f} {row['ratio']:>14.2f}×{mark}")
    return 0


def gpu_name() -> str | None:
    """The GPU's name, asked in a process of its own so this one stays free of CUDA."""
    probe = "import torch; print(torch.cuda.get_device_name() if torch.cuda.is_available() else '')"
    name = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip()
    return name or None


if __name__ == "__main__":
    sys.exit(main())
