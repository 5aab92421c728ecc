"""Grading a class: `quizprep grade DIR --jobs 2` against `quizprep grade FILE` once per file.

Generates 200 submissions over five exercises (40 each) from tests/solutions/*.py: correct files
(the solutions and the correct variants), buggy ones (the one-line mutants in tests/grader/mutants)
and a few hostile ones (an infinite loop, os._exit, a segfault, a forbidden call, a memory blow-up),
all graded with --timeout 2 and --seed 0. It reports:

* the cohort's wall and CPU time (one `quizprep grade DIR` per exercise folder, summed);
* the one-by-one wall and CPU time: every hostile file is timed (they are few and the slowest),
  plus a random sample of 20 of the others, scaled up to their number (said so in the output);
  each exercise's files are timed right after its cohort run, so load from elsewhere on a shared
  machine falls on both alike, and CPU seconds (which such load barely moves) are reported too;
* peak memory: the largest resident set of the grader and all its workers together, sampled
  from /proc every 0.1 s, and the largest single process (getrusage of the children);
* worker processes left afterwards, from /proc (must be 0), and whether every sampled file's
  verdict in the cohort equals its verdict graded alone.

    python benchmarks/cohort_grading.py [--jobs 2] [--sample 20] [--fresh-workers] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "tests" / "solutions"
GRADER_TESTS = ROOT / "tests" / "grader"
EXERCISES = ("attention", "gqa", "masking", "mha", "softmax")
PER_EXERCISE = 40
TIMEOUT = "2"
HOSTILE = {  # (exercise, name): body of the entry point
    ("attention", "loop"): "    while True:\n        pass\n",
    ("attention", "exit"): "    import os\n    os._exit(3)\n",
    ("attention", "segfault"): "    import ctypes\n    return ctypes.string_at(0)\n",
    ("attention", "forbidden"): "    import torch\n    return torch.nn.functional.scaled_dot_product_attention(q, k, v), None\n",
    ("softmax", "loop"): "    while True:\n        pass\n",
    ("softmax", "exit"): "    import os\n    os._exit(3)\n",
    ("softmax", "memory"): "    import torch\n    return [torch.ones(1 << 27) for _ in range(64)]\n",
    ("softmax", "forbidden"): "    import torch\n    return torch.softmax(x, dim)\n",
}
SIGNATURES = {"attention": "def scaled_dot_product_attention(q, k, v, mask=None):\n",
              "softmax": "def stable_softmax(x, dim=-1):\n"}
CLI = [str(Path(sys.executable).with_name("quizprep"))]  # the installed console script


def of_exercise(folder: Path, exercise: str) -> list[Path]:
    """The files in `folder` whose `# quizprep: exercise=NAME` line names `exercise`."""
    line = re.compile(rf"^# quizprep: exercise={re.escape(exercise)}$", re.MULTILINE)
    return sorted(p for p in folder.glob("*.py") if line.search(p.read_text()))


def generate(root: Path) -> dict[str, list[tuple[Path, str]]]:
    """Folder per exercise: (file, kind) with kind correct | buggy | hostile."""
    made: dict[str, list[tuple[Path, str]]] = {}
    for exercise in EXERCISES:
        folder = root / exercise
        folder.mkdir(parents=True)
        correct = [SOLUTIONS / f"{exercise}.py"] + of_exercise(GRADER_TESTS / "variants", exercise)
        buggy = of_exercise(GRADER_TESTS / "mutants", exercise)
        hostile = [(name, body) for (ex, name), body in HOSTILE.items() if ex == exercise]
        entries: list[tuple[str, str]] = [("hostile", SIGNATURES[exercise] + body) for _, body in hostile]
        number = 0
        while len(entries) < PER_EXERCISE:
            pool, kind = (correct, "correct") if number % 2 == 0 else (buggy, "buggy")
            source = pool[(number // 2) % len(pool)]
            entries.append((kind, f"# student {number}\n" + source.read_text()))
            number += 1
        made[exercise] = []
        for index, (kind, text) in enumerate(random.Random(exercise).sample(entries, len(entries))):
            path = folder / f"student_{index:03d}.py"
            path.write_text(text)
            made[exercise].append((path, kind))
    return made


def tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and all its descendants."""
    total, stack = 0, [pid]
    page = os.sysconf("SC_PAGE_SIZE")
    while stack:
        current = stack.pop()
        try:
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * page
            for task in Path(f"/proc/{current}/task").iterdir():
                stack += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return total


def run_measured(argv: list[str]) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds of the whole process tree, its peak resident bytes, and stdout."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss(process.pid))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = process.communicate()
    elapsed = time.perf_counter() - started
    done.set()
    sampler.join()
    if not out.strip():
        raise SystemExit(f"{' '.join(argv[1:4])} … printed nothing (exit {process.returncode}):\n"
                         f"{err.decode(errors='replace')[-2000:]}")
    return elapsed, _children_cpu() - cpu_before, peak, out.decode()


def _children_cpu() -> float:
    """User + system seconds of every waited-for descendant (the grader waits for its workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def workers_left(marker: str) -> list[int]:
    """Processes still running quizprep's worker with a path under `marker`, or a fork server and the
    workers forked from it (they carry the server's command line)."""
    left = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "learner_side/forkserver.py" in cmdline or ("learner_side/worker.py" in cmdline and marker in cmdline):
            left.append(int(entry.name))
    return left


def verdict(row: dict) -> tuple:
    return row["passed"], row["score"], row["failed"], row["diagnoses"]


def single_verdict(payload: dict) -> tuple:
    failed = [c["id"] for c in payload["checks"] if c["status"] in {"fail", "error"}]
    diagnoses = list(dict.fromkeys(c["diagnosis_id"] for c in payload["checks"] if c.get("diagnosis_id")))
    return payload["passed"], payload["score"], failed, diagnoses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sample", type=int, default=20, help="non-hostile files timed one by one")
    parser.add_argument("--fresh-workers", action="store_true", help="grade the class with one worker per file")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="quizprep-bench-class-") as scratch:
        result = measure(Path(scratch), args)
        result["workers_left_at_end"] = len(workers_left(scratch))
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:34} {value}")
    return 0 if result["workers_left_at_end"] == result["workers_left_after_cohorts"] == 0 else 1


def measure(scratch: Path, args: argparse.Namespace) -> dict:
    """Per exercise, the cohort run and then its sampled files one by one, so that load from
    elsewhere on the machine falls on both alike."""
    made = generate(scratch)
    files = [(exercise, path, kind) for exercise, rows in made.items() for path, kind in rows]
    hostile = [f for f in files if f[2] == "hostile"]
    others = [f for f in files if f[2] != "hostile"]
    sample = hostile + random.Random(0).sample(others, min(args.sample, len(others)))
    cohort = {"wall": 0.0, "cpu": 0.0, "peak": 0}
    single: dict[Path, tuple[float, float]] = {}
    rows: dict[Path, dict] = {}
    agree, left = 0, 0
    for exercise in EXERCISES:
        argv = CLI + ["grade", str(scratch / exercise), "--exercise", exercise, "--jobs", str(args.jobs),
                      "--json", "--timeout", TIMEOUT, "--seed", "0"] + ["--fresh-workers"] * args.fresh_workers
        wall, cpu, peak, out = run_measured(argv)
        cohort = {"wall": cohort["wall"] + wall, "cpu": cohort["cpu"] + cpu, "peak": max(cohort["peak"], peak)}
        rows.update({scratch / exercise / row["file"]: row for row in json.loads(out)["submissions"]})
        left += len(workers_left(str(scratch)))
        for _, path, _ in (f for f in sample if f[0] == exercise):
            argv = CLI + ["grade", str(path), "--exercise", exercise, "--json", "--timeout", TIMEOUT, "--seed", "0"]
            wall, cpu, _, out = run_measured(argv)
            single[path] = (wall, cpu)
            agree += single_verdict(json.loads(out)) == verdict(rows[path])
    largest_process = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    sampled_others = [p for _, p, k in sample if k != "hostile"]

    def one_by_one(index: int) -> float:
        mean = sum(single[p][index] for p in sampled_others) / len(sampled_others)
        return sum(single[p][index] for _, p, _ in hostile) + mean * len(others)

    expected = sum(rows[path]["passed"] == (kind == "correct") for _, path, kind in files)
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "submissions": len(files),
        "kinds": {k: sum(1 for f in files if f[2] == k) for k in ("correct", "buggy", "hostile")},
        "jobs": args.jobs, "fresh_workers": args.fresh_workers,
        "cohort_wall_s": round(cohort["wall"], 1), "cohort_cpu_s": round(cohort["cpu"], 1),
        "one_by_one_wall_s_estimated": round(one_by_one(0), 1),
        "one_by_one_cpu_s_estimated": round(one_by_one(1), 1),
        "one_by_one_timed": f"all {len(hostile)} hostile + a random {len(sampled_others)} of the "
                            f"{len(others)} others, scaled up to all {len(others)}",
        "speedup_wall": round(one_by_one(0) / cohort["wall"], 2),
        "speedup_cpu": round(one_by_one(1) / cohort["cpu"], 2),
        "cohort_peak_tree_rss_mib": round(cohort["peak"] / 2**20),
        "largest_single_process_rss_mib": round(largest_process / 2**20),
        "verdicts_as_expected": f"{expected}/{len(files)} (correct pass, buggy and hostile fail)",
        "verdicts_equal_alone": f"{agree}/{len(sample)}",
        "workers_left_after_cohorts": left,
    }


if __name__ == "__main__":
    sys.exit(main())
