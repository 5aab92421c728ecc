"""The grader's verdicts on code in real-world styles, and its time per file against `import torch`.

Grades every file of tests/grader/realworld and realworld2 (held out: written without reading the
grader) and tests/grader/production, each with its `# expect:` header, in one worker as a coach would, and
prints per corpus: correct files that pass, buggy files that fail, buggy files named correctly
with no other name anywhere in the report, and files where every failing check carries that name.

    python benchmarks/grader_corpus.py [--corpus realworld realworld2 production] [--verbose]
"""
from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXPECT = re.compile(r"^# expect: (?:pass|fail diagnosis=(\S+))\s*$", re.MULTILINE)


def import_torch_seconds(repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def grade_corpus(folder: Path, verbose: bool) -> dict[str, int]:
    from quizprep.grader.grade import GradeOptions, grade
    from quizprep.grader.session import Limits, WorkerSession

    files = sorted(folder.glob("*.py"))
    tally = dict.fromkeys(("correct", "passed", "buggy", "failed", "named", "named_everywhere"), 0)
    session = WorkerSession(files[0], limits=Limits(check_seconds=30))
    try:
        for path in files:
            wanted = EXPECT.search(path.read_text()).group(1)
            report = grade(path, GradeOptions(limits=session.limits), session)
            failing = [c for c in report.checks if c.status in {"fail", "error"}]
            names = {c.diagnosis_id for c in failing if c.diagnosis_id}
            if wanted is None:
                tally["correct"] += 1
                tally["passed"] += report.passed
                verdict = "pass" if report.passed else "WRONGLY FAILED"
            else:
                tally["buggy"] += 1
                tally["failed"] += not report.passed
                tally["named"] += names == {wanted}
                tally["named_everywhere"] += all(c.diagnosis_id == wanted for c in failing) and bool(failing)
                verdict = f"named {sorted(names) or '-'} (want {wanted})"
            if verbose:
                print(f"  {path.name}: {verdict}")
    finally:
        session.close()
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", nargs="+", default=["realworld", "realworld2", "production"])
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    baseline = import_torch_seconds()
    print(f"python -c 'import torch': {baseline:.2f} s (median of 3)")
    for name in args.corpus:
        folder = ROOT / "tests" / "grader" / name
        started = time.perf_counter()
        tally = grade_corpus(folder, args.verbose)
        per_file = (time.perf_counter() - started) / (tally["correct"] + tally["buggy"])
        print(f"{name}: correct files passing {tally['passed']}/{tally['correct']}; buggy files failing "
              f"{tally['failed']}/{tally['buggy']}; named with no other name {tally['named']}/{tally['buggy']}; "
              f"every failing check named {tally['named_everywhere']}/{tally['buggy']}; "
              f"{per_file:.2f} s per file in a warm worker ({per_file / baseline:.2f}× import torch)")


if __name__ == "__main__":
    main()
