"""`quizprep exercism-run SLUG INPUT_DIR OUTPUT_DIR`: the call shape of Exercism's test runners
(building/tooling/test-runners/interface.md), so a track's runner image can run quizprep as its
test runner: it grades INPUT_DIR/<slug with '_' for '-'>.py as that exercise and writes
OUTPUT_DIR/results.json (version 3), exiting 0 whenever it was written. Imports torch only inside
the handler.
"""
from __future__ import annotations

import argparse
import secrets
import sys
from pathlib import Path

from quizprep.cli.grade_command import TOTAL_PER_CHECK, positive_seconds
from quizprep.grader.submission_file import target_inside

# Exercism gives a solution 20 s in all: the grade ends before, its start-up included.
CHECK_SECONDS = 5.0
TOTAL_SECONDS = 18.0


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "exercism-run", help="grade a solution as Exercism's test runner: SLUG INPUT_DIR OUTPUT_DIR",
        description="Grade INPUT_DIR/<slug>.py (dashes as underscores, e.g. kv-cache: kv_cache.py) as that "
                    "exercise and write OUTPUT_DIR/results.json in Exercism's test-runner format (version 3). "
                    "Exits 0 whenever results.json was written, whatever the tests say.")
    run.add_argument("slug", help="the exercise, e.g. attention, mha, kv-cache")
    run.add_argument("input_dir", type=Path, help="the folder holding the solution (read only)")
    run.add_argument("output_dir", type=Path, help="where results.json is written")
    run.add_argument("--timeout", type=positive_seconds, metavar="S",
                     help=f"seconds allowed per check (default {CHECK_SECONDS:g}, and {TOTAL_SECONDS:g} for the whole "
                          "grade, inside Exercism's 20 s; given, the whole grade gets 2.25×, as for `grade`)")
    run.set_defaults(handler=exercism_run)


def exercism_run(args: argparse.Namespace) -> int:
    from quizprep.grader import exercism
    from quizprep.grader.exercises import UnknownExercise, load_spec
    from quizprep.grader.grade import GradeOptions, grade
    from quizprep.grader.worker_session import Limits

    exercise = args.slug.replace("-", "_")
    solution = args.input_dir / f"{exercise}.py"
    try:
        load_spec(exercise)
        target = target_inside(solution, args.input_dir)
        problem = _solution_problem(solution, target)
        if problem or target is None:
            payload = exercism.error_results(problem)
        else:
            limits = Limits(check_seconds=CHECK_SECONDS, total_seconds=TOTAL_SECONDS) if args.timeout is None else \
                Limits(check_seconds=args.timeout, total_seconds=args.timeout * TOTAL_PER_CHECK)
            options = GradeOptions(exercise=exercise, seed=secrets.randbits(31), limits=limits)
            payload = exercism.results(grade(target, options))
    except UnknownExercise as error:
        payload = exercism.error_results(f"quizprep cannot grade {args.slug!r}: {error.args[0]}")
    written = exercism.write(payload, args.output_dir)
    print(f"quizprep exercism-run: wrote {written}", file=sys.stderr)
    return 0


def _solution_problem(solution: Path, target: Path | None) -> str:
    """Why `solution` is not graded ('' when it is): absent, or a link out of the input folder
    (`target` None), which the runner (perhaps root) would otherwise read and print a line of."""
    shown = f"<solution-dir>/{solution.name}"
    if target is None:
        return f"{shown} is a symbolic link out of the solution's folder: not graded"
    if not target.is_file():
        return f"no solution file: expected {shown}"
    return ""
