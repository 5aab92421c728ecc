"""Does a named mistake quote the learner's own line? Grades each mutant of tests/grader/mutants and
of tests/grader/style_mutants.py (the one check its `# expect:` header names) in one worker and sorts
the named failures: the quoted line is one the mutant marks with a `# BUG` comment (right), some
other line (wrong), or none. A mutant whose mistake leaves an argument unread names it in its header
(`unread=rotary_dim`): the parameter's own line, quoted as never read, is right for it too.

    python benchmarks/learner_lines.py [--verbose] [PREFIX ...]

With prefixes (`rope`, `paged_decode`...), only the mutants whose names start with one of them.
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "tests" / "grader" / "mutants"
EXPECT = re.compile(r"^# expect: check=(\S+) diagnosis=(\S+)(?: unread=(\S+))?", re.MULTILINE)
QUOTED = re.compile(r"Your line: [^:]+:(\d+): ")
BUG = re.compile(r"#.*\bBUG\b")


def verdict(path: Path, where: str, unread: str | None) -> str:
    quoted = QUOTED.search(where)
    if quoted is None:
        return "none"
    line = path.read_text().splitlines()[int(quoted.group(1)) - 1]
    unread_named = unread is not None and re.search(rf"\b{unread}\b", line) and f"never reads {unread})" in where
    return "right" if BUG.search(line) or unread_named else "wrong"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("prefixes", nargs="*", help="only the mutants whose file names start with one of these")
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "grader")]
    from style_mutants import write_style_mutants

    from quizprep.grader.grade import GradeOptions, grade
    from quizprep.grader.worker_session import Limits, WorkerSession

    counts: Counter[str] = Counter()
    styles = tempfile.TemporaryDirectory()
    paths = sorted([*MUTANTS.glob("*.py"), *write_style_mutants(Path(styles.name))], key=lambda path: path.stem)
    session = WorkerSession(ROOT / "tests" / "solutions" / "attention.py", limits=Limits(check_seconds=30))
    try:
        for path in paths:
            if args.prefixes and not path.stem.startswith(tuple(args.prefixes)):
                continue
            check_id, diagnosis, unread = EXPECT.search(path.read_text()).groups()  # type: ignore[union-attr]
            report = grade(path, GradeOptions(only=(check_id,), limits=session.limits), session)
            result = next(c for c in report.checks if c.id == check_id)
            kind = verdict(path, result.where, unread) if result.diagnosis_id == diagnosis else "misnamed"
            counts[kind] += 1
            if args.verbose or kind == "wrong":
                print(f"{kind:8s} {path.stem:45s} {result.where.splitlines()[-1] if result.where else ''}")
    finally:
        session.close()
        styles.cleanup()
    total = sum(counts.values())
    print(f"{total} mutants: {counts['right']} quote the planted line, {counts['none']} quote none, "
          f"{counts['wrong']} quote a wrong line, {counts['misnamed']} not named as expected")
    return 1 if counts["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
