"""`quizprep grade` and `quizprep init`. Imports torch only inside the handlers.

The grader knows no progress database: `quizprep.cli.grade` registers these commands with a
`record` callable that keeps the grade in study (`--db`, `--no-record`).
"""
from __future__ import annotations

import argparse
import functools
import os
import secrets
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from quizprep.cli.options import add_db_option
from quizprep.grader.submission_file import target_inside

if TYPE_CHECKING:
    from quizprep.grader.grade import GradeReport
    from quizprep.grader.worker_session import Limits, WorkerSession

Recorder = Callable[["GradeReport", "Path | None"], object]

STUB_PACKAGE = "quizprep.exercises"

# The whole grade (and, after it, the perf phase) may take this many --timeout: at the default 20 s,
# any submission has its verdict within a minute, start-up included.
TOTAL_PER_CHECK = 2.25


def register(subparsers: argparse._SubParsersAction, record: Recorder | None = None) -> None:
    """`record(report, db)` is called after each single-file grade unless --no-record; without
    one, a grade is not recorded."""
    grade = subparsers.add_parser("grade", help="grade an exercise file against the reference",
                                  description="Run your exercise in an isolated process and check it.")
    grade.add_argument("path", type=Path, help="your exercise file, e.g. exercises/attention.py, or a folder of "
                                               "submissions to grade as one class (needs --exercise)")
    grade.add_argument("--exercise", help="exercise name (default: '# quizprep: exercise=NAME' or the file name)")
    grade.add_argument("--json", action="store_true", help="print exactly one JSON object")
    grade.add_argument("--seed", type=int, default=None,
                       help="seed for the generated inputs (default: a fresh secret one, printed in the report)")
    grade.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    grade.add_argument("--timeout", type=positive_seconds, default=20.0, metavar="S",
                       help="seconds allowed per check (default 20); the whole grade gets 2.25×, "
                            "and so does the perf phase")
    grade.add_argument("--perf", nargs="?", const="default", choices=("default", "full"),
                       help="time against PyTorch's SDPA once all checks pass (on a GPU, 'full' times all 48 "
                            "sizes; the default six take about a minute)")
    grade.add_argument("--format", choices=("text", "json", "exercism"), default="text",
                       help="exercism: write Exercism's test-runner results.json (v3) to --output-dir and exit 0")
    grade.add_argument("--output-dir", type=Path, metavar="DIR",
                       help="where --format exercism writes (a file: DIR/results.json, default here; "
                            "a folder: DIR/<name>/results.json per submission, required)")
    grade.add_argument("--jobs", type=_count, metavar="N", help="folder: submissions graded at once (default: CPUs)")
    grade.add_argument("--csv", type=Path, metavar="FILE", help="folder: also write one CSV row per submission")
    grade.add_argument("--fresh-workers", action="store_true",
                       help="folder: a new interpreter for every submission instead of a worker forked from "
                            "one that imported torch (slower)")
    add_db_option(grade, "the grade is recorded in, as for `quizprep quiz`")
    grade.add_argument("--no-record", action="store_true",
                       help="do not record the grade (a named mistake makes its quiz question due for review)")
    grade.set_defaults(handler=functools.partial(grade_command, record=record))

    init = subparsers.add_parser("init", help="copy fresh exercise stubs into a directory")
    init.add_argument("directory", type=Path)
    init.add_argument("--force", action="store_true", help="overwrite files that already exist")
    init.set_defaults(handler=init_command)


def positive_seconds(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _usage_problem(args: argparse.Namespace) -> str:
    """What is wrong with this combination of arguments ('' when nothing)."""
    folder = args.path.is_dir()
    if args.json and args.format not in ("text", "json"):
        return f"--json and --format {args.format} ask for two outputs; choose one"
    if not folder:
        extra = [flag for flag, value in (("--jobs", args.jobs), ("--csv", args.csv),
                                          ("--fresh-workers", args.fresh_workers)) if value]
        return f"{', '.join(extra)} grade a folder of submissions; {args.path} is not one" if extra else ""
    if not args.exercise:
        return f"{args.path} is a folder: say which exercise its files solve with --exercise NAME"
    if (args.json or args.format == "json") and args.csv is not None:
        return "--json and --csv ask for two outputs; choose one"
    if args.perf:
        return "--perf times one file; grade the folder without it, then time a file"
    if args.format == "exercism" and args.output_dir is None:
        return "--format exercism on a folder needs --output-dir DIR (one DIR/<name>/results.json per file)"
    return ""


def _follow_link(args: argparse.Namespace) -> str:
    """A file's links followed once, where they stay in its folder; args.path is then what was
    checked, and the grader never follows a link again (submission_file). Why not, else ''."""
    if args.path.is_dir():
        return ""
    target = target_inside(args.path, args.path.absolute().parent)
    if target is None:
        # the grader may run as root: followed, a learner's link would show another user's file's lines
        return f"{args.path} is a symbolic link to a file outside its folder; grade the file itself"
    args.path = target
    return ""


def grade_command(args: argparse.Namespace, record: Recorder | None = None) -> int:
    problem = _usage_problem(args) or _follow_link(args)
    if problem:
        print(f"quizprep grade: {problem}", file=sys.stderr)
        return 2
    args.json = args.json or args.format == "json"
    from quizprep.grader.worker_session import Limits

    limits = Limits(check_seconds=args.timeout, total_seconds=args.timeout * TOTAL_PER_CHECK)
    # The worker imports torch while this process imports its own (the next imports, seconds).
    early = None if args.path.is_dir() else prestart(args.path, limits, args.device, args.exercise)
    early_device = None if early is None else prestart_device_check(args.path, limits, args.device, args.exercise)
    try:
        return _grade_command(args, limits, (early, early_device), record)
    finally:
        for worker in (early, early_device):
            if worker is not None:
                worker.close()


def prestart(path: Path, limits: Limits, device: str, exercise: str | None = None) -> WorkerSession | None:
    """A worker for `path` (graded as `exercise`, or as its exercise line or name say) launched
    before the grader imports torch, so that the two imports run side by side; `grade(...,
    prestarted=)` gives it its guards. Only where the checks surely run on the CPU: --device cpu,
    or auto for every exercise but the Triton track's on a machine with a GPU (its checks run
    there, in a worker with the GPU's limits)."""
    from quizprep.grader.exercises import checked_on_gpu, exercise_for, warms_up
    from quizprep.grader.learner_side.sandbox import gpu_device_nodes
    from quizprep.grader.worker_session import WorkerSession

    if device not in ("auto", "cpu") or not path.is_file():
        return None
    name = exercise_for(path, exercise)
    if device == "auto" and checked_on_gpu(name) and gpu_device_nodes():
        return None
    os.environ["TRITON_INTERPRET"] = "1"  # grade.select_triton_mode("cpu"), which imports torch with grade
    return _launched(WorkerSession(path, forbidden=None, limits=limits, warm_up=warms_up(name)))


def prestart_device_check(path: Path, limits: Limits, device: str,
                          exercise: str | None = None) -> WorkerSession | None:
    """On a machine with a GPU, under --device auto, the device check's CUDA worker for `path`,
    launched beside the early checks worker: its torch import and CUDA context (seconds on an
    H200) then overlap the grader's own import instead of following it. `grade(...,
    prestarted_device=)` gives it its guards, or closes it where the check does not run."""
    from quizprep.grader.exercises import exercise_for, probed_on_gpu
    from quizprep.grader.learner_side.sandbox import gpu_device_nodes
    from quizprep.grader.worker_session import WorkerSession

    if device != "auto" or not gpu_device_nodes() or not probed_on_gpu(exercise_for(path, exercise)):
        return None
    return _launched(WorkerSession(path, forbidden=None, limits=limits.on("cuda")))


def _launched(session: WorkerSession) -> WorkerSession | None:
    """`session` launched, or None where the file could not be copied (grade then says why)."""
    from quizprep.grader.failures import LearnerFailure

    try:
        session.launch()
    except LearnerFailure:
        return None
    return session


def _grade_command(args: argparse.Namespace, limits: Limits,
                   early: tuple[WorkerSession | None, WorkerSession | None], record: Recorder | None) -> int:
    from rich.console import Console

    from quizprep.grader.device import DeviceUnavailable
    from quizprep.grader.exercises import UnknownExercise
    from quizprep.grader.grade import GradeOptions, grade
    from quizprep.grader.report import render, to_json

    if args.path.is_dir():
        from quizprep.cli.cohort_command import cohort_command

        try:
            return cohort_command(args, limits)
        except (UnknownExercise, DeviceUnavailable) as error:
            print(f"quizprep grade: {error.args[0]}", file=sys.stderr)
            return 2
    seed = args.seed if args.seed is not None else secrets.randbits(31)
    options = GradeOptions(exercise=args.exercise, seed=seed, device=args.device, limits=limits,
                           perf=bool(args.perf), perf_full=args.perf == "full")
    try:
        report = grade(args.path, options, prestarted=early[0], prestarted_device=early[1])
    except UnknownExercise as error:
        hint = "" if args.exercise else (f"; that name came from the file {args.path.name}: say which exercise it "
                                         "solves with --exercise NAME (or a '# quizprep: exercise=NAME' line)")
        print(f"quizprep grade: {error.args[0]}{hint}", file=sys.stderr)
        return 2
    except (FileNotFoundError, DeviceUnavailable) as error:
        print(f"quizprep grade: {error.args[0]}", file=sys.stderr)
        return 2
    if args.format == "exercism":
        from quizprep.grader import exercism

        written = exercism.write(exercism.results(report), args.output_dir or Path("."))
        print(f"quizprep grade: wrote {written}", file=sys.stderr)
        return 0  # the runner interface: 0 whenever results.json was written, whatever the tests say
    if args.json:
        print(to_json(report))
    else:
        render(report, Console())
    if record is not None and not args.no_record:
        record(report, args.db)
    return 0 if report.passed else 1


def stub_names() -> list[str]:
    root = resources.files(STUB_PACKAGE)
    return sorted(p.name for p in root.iterdir() if p.name.endswith(".py") and p.name != "__init__.py") + \
        sorted(p.name for p in root.iterdir() if p.name.endswith(".md"))


def init_command(args: argparse.Namespace) -> int:
    target: Path = args.directory
    if target.exists() and not target.is_dir():
        print(f"quizprep init: {target} exists and is not a directory", file=sys.stderr)
        return 2
    names = stub_names()
    clashes = [n for n in names if (target / n).exists()]
    if clashes and not args.force:
        print(f"quizprep init: {', '.join(clashes)} already exist in {target}; nothing copied "
              "(use --force to overwrite)", file=sys.stderr)
        return 2
    target.mkdir(parents=True, exist_ok=True)
    root = resources.files(STUB_PACKAGE)
    for name in names:
        (target / name).write_text(root.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8")
    print(f"Copied {len(names)} files to {target}: {', '.join(names)}")
    print(f"Next: edit {target / 'attention.py'}, then run: quizprep grade {target / 'attention.py'}")
    return 0
