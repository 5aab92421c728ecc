"""The grader's verdicts on code in real-world styles, and its time per file against `import torch`.

Grades every file of tests/grader/realworld, realworld2, realworld4, realworld5, realworld6,
realworld7, realworld8, realworld9, realworld10, realworld11 and realworld12 (held out: written without reading the grader), realworld3 (issue 20's classes),
tests/grader/production and tests/grader/public (public projects' code, adapted to a contract: its
README names each source), each with its `# expect:` header, in one worker as a coach would, and prints per corpus and per
exercise: correct files that pass (accepted), buggy files that fail (caught), buggy files named
correctly with no other name anywhere in the report (named), files whose report carries a wrong name
(contradictory), files with an internal grader error, and files where every failing check carries
the right name.

    python benchmarks/grader_corpus.py [--corpus realworld realworld2 realworld3 realworld4 realworld5 realworld6
                                        realworld7 realworld8 realworld9 realworld10 realworld11 realworld12 production public]
                                       [--verbose]
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
EXERCISE = re.compile(r"^#\s*quizprep:\s*exercise\s*=\s*([\w-]+)", re.MULTILINE)
COUNTS = ("correct", "passed", "buggy", "failed", "named", "named_everywhere", "contradictory", "errors")


def import_torch_seconds(repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def grade_corpus(folder: Path, verbose: bool) -> dict[str, dict[str, int]]:
    """Counts per exercise (and under "all")."""
    from quizprep.grader.grade import GradeOptions, grade
    from quizprep.grader.worker_session import Limits, WorkerSession

    files = sorted(folder.glob("*.py"))
    tallies: dict[str, dict[str, int]] = {}
    session = WorkerSession(files[0], limits=Limits(check_seconds=30))
    try:
        for path in files:
            text = path.read_text()
            wanted = EXPECT.search(text).group(1)
            report = grade(path, GradeOptions(limits=session.limits), session)
            outcome = _outcome(report, wanted)
            for key in ("all", EXERCISE.search(text).group(1)):
                tally = tallies.setdefault(key, dict.fromkeys(COUNTS, 0))
                for name, value in outcome.items():
                    tally[name] += value
            if verbose:
                print(f"  {path.name}: {_verdict(report, wanted)}")
    finally:
        session.close()
    return tallies


def _outcome(report, wanted: str | None) -> dict[str, int]:
    failing = [c for c in report.checks if c.status in {"fail", "error"}]
    names = {c.diagnosis_id for c in failing if c.diagnosis_id}
    errors = int(any(c.status == "error" for c in report.checks))
    if wanted is None:
        return {"correct": 1, "passed": int(report.passed), "errors": errors,
                "contradictory": int(bool(names))}
    return {"buggy": 1, "failed": int(not report.passed), "named": int(names == {wanted}),
            "named_everywhere": int(bool(failing) and all(c.diagnosis_id == wanted for c in failing)),
            "contradictory": int(bool(names - {wanted})), "errors": errors}


def _verdict(report, wanted: str | None) -> str:
    names = sorted({c.diagnosis_id for c in report.checks if c.status in {"fail", "error"} and c.diagnosis_id})
    if wanted is None:
        return "pass" if report.passed else f"WRONGLY FAILED {names or ''}"
    return f"named {names or '-'} (want {wanted})"


def _line(label: str, tally: dict[str, int]) -> str:
    return (f"{label:<16} accepted {tally['passed']}/{tally['correct']}  caught {tally['failed']}/{tally['buggy']}  "
            f"named {tally['named']}/{tally['buggy']}  every check named {tally['named_everywhere']}/"
            f"{tally['buggy']}  contradictory {tally['contradictory']}  internal errors {tally['errors']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", nargs="+",
                        default=["realworld", "realworld2", "realworld3", "realworld4", "realworld5",
                                 "realworld6", "realworld7", "realworld8", "realworld9", "realworld10",
                                 "realworld11", "realworld12", "production", "public"])
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    baseline = import_torch_seconds()
    print(f"python -c 'import torch': {baseline:.2f} s (median of 3)")
    for name in args.corpus:
        folder = ROOT / "tests" / "grader" / name
        started = time.perf_counter()
        tallies = grade_corpus(folder, args.verbose)
        total = tallies.pop("all")
        per_file = (time.perf_counter() - started) / (total["correct"] + total["buggy"])
        print(f"{name}: {_line('all', total)}; {per_file:.2f} s per file in a warm worker "
              f"({per_file / baseline:.2f}× import torch)")
        for exercise in sorted(tallies):
            print("  " + _line(exercise, tallies[exercise]))

if __name__ == "__main__":
    main()
