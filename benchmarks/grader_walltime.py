"""The grader's wall time per exercise, on the example solution, as a ratio to `import torch`.

Both are timed here, in the same script, as fresh processes: the ratio is what a learner
feels, and it cancels most of the machine's speed. Goal: at most 3× `python -c "import torch"`.
With ``--device cuda`` (a GPU machine) every grade runs with that device and the goal is 2×;
``--device auto`` there grades as a learner's default does (checks on the CPU, the device probe
on the GPU).

CPU time (user + system) is counted for each command's process and the children it reaps. The
jailed worker dies inside bubblewrap's PID namespace and is not reaped into it: with
``QUIZPREP_JAIL=off`` in the environment the worker is the grader's own child and its CPU counts.
``--against DIR`` grades each file with DIR's quizprep too (e.g. an export of main), in the same
rounds, for a before and after that one burst of load cannot tilt. ``--perf`` grades with the perf
phase too: every example must pass it (a failing grade stops the script), and no goal applies.

    python benchmarks/grader_walltime.py [--repeat N] [--json] [--device auto|cpu|cuda] [--only STEM ...]
                                         [--against DIR] [--perf]
"""
from __future__ import annotations

import argparse
import json
import os
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


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (the process's and its reaped children's) of one run."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd)
    output = process.stdout.read() if process.stdout else b""
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        tail = output.decode(errors="replace")[-2000:]
        raise SystemExit(f"{' '.join(argv[:3])} … failed (exit {process.returncode}):\n{tail}")
    return elapsed, usage.ru_utime + usage.ru_stime


def interleaved_medians(commands: dict[str, tuple[list[str], Path]], repeat: int) -> dict[str, tuple[float, float]]:
    """Median wall and CPU time of each command, the commands taking turns within every round so
    that a burst of load from elsewhere on the machine hits the baseline and the grader alike."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, (argv, cwd) in commands.items():
            samples[name].append(timed(argv, cwd))
    return {name: (statistics.median(wall for wall, _ in runs), statistics.median(cpu for _, cpu in runs))
            for name, runs in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median); default 3")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="the grade's --device; 'cuda' needs a GPU (default: auto)")
    parser.add_argument("--only", nargs="+", metavar="STEM", help="grade only these example solutions (e.g. mha)")
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="also grade each file with the quizprep package of this tree (e.g. an export of main)")
    parser.add_argument("--perf", action="store_true", help="grade with --perf too; each example must pass it")
    args = parser.parse_args()
    gpu = gpu_name()
    if args.device == "cuda" and gpu is None:
        raise SystemExit("--device cuda: PyTorch sees no CUDA device here")
    goal = GPU_GOAL if gpu and args.device != "cpu" else GOAL

    commands = {"import torch": ([sys.executable, "-c", "import torch"], ROOT)}
    trees = {"": ROOT, **({" (against)": args.against.resolve()} if args.against else {})}
    for solution in sorted(SOLUTIONS.glob("*.py")):
        if args.only and solution.stem not in args.only:
            continue
        for suffix, tree in trees.items():
            # `quizprep grade FILE` itself: its process's exit is part of what a learner waits for
            commands[solution.stem + suffix] = ([sys.executable, "-m", "quizprep", "grade", str(solution), "--json",
                                                 "--device", args.device, *(["--perf"] if args.perf else [])], tree)
    medians = interleaved_medians(commands, args.repeat)
    baseline, baseline_cpu = medians.pop("import torch")
    rows = []
    for exercise, (seconds, cpu) in medians.items():
        rows.append({"exercise": exercise, "seconds": seconds, "ratio": seconds / baseline,
                     "cpu_seconds": cpu, "cpu_ratio": cpu / baseline_cpu,
                     "within_goal": None if args.perf else seconds / baseline <= goal})
    result = {
        "machine": f"{platform.machine()}, {platform.processor() or 'unknown CPU'}, "
                   f"{len(__import__('os').sched_getaffinity(0))} cores available",
        "gpu": gpu,
        "device": args.device,
        "python": platform.python_version(),
        "import_torch_seconds": baseline,
        "import_torch_cpu_seconds": baseline_cpu,
        "jail": os.environ.get("QUIZPREP_JAIL", "on"),
        "load_average": os.getloadavg(),
        "repeat": args.repeat,
        "goal_ratio": None if args.perf else goal,
        "perf": args.perf,
        "exercises": rows,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"python -c 'import torch': {baseline:.2f} s, {baseline_cpu:.2f} s CPU (median of {args.repeat}); grade"
          f" --device {args.device}{' --perf (every grade passed)' if args.perf else ''} on {gpu or 'CPU only'};"
          f" load average now {os.getloadavg()[0]:.1f}")
    print(f"{'exercise':<24} {'grade (s)':>10} {'÷ import torch':>15} {'CPU (s)':>8} {'÷ its CPU':>10}")
    for row in rows:
        mark = "" if row["within_goal"] in (True, None) else f"  over the {goal:g}× goal"
        print(f"{row['exercise']:<24} {row['seconds']:>10.2f} {row['ratio']:>14.2f}× {row['cpu_seconds']:>8.2f}"
              f" {row['cpu_ratio']:>9.2f}×{mark}")
    return 0


def gpu_name() -> str | None:
    """The GPU's name, asked in a process of its own so this one stays free of CUDA."""
    probe = "import torch; print(torch.cuda.get_device_name() if torch.cuda.is_available() else '')"
    name = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip()
    return name or None


if __name__ == "__main__":
    sys.exit(main())
