"""`quizprep grade` and `quizprep init`. Imports torch only inside the handlers."""
from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

STUB_PACKAGE = "quizprep.exercises"


def register(subparsers: argparse._SubParsersAction) -> None:
    grade = subparsers.add_parser("grade", help="grade an exercise file against the reference",
                                  description="Run your exercise in an isolated process and check it.")
    grade.add_argument("path", type=Path, help="your exercise file, e.g. exercises/attention.py")
    grade.add_argument("--exercise", help="exercise name (default: '# quizprep: exercise=NAME' or the file name)")
    grade.add_argument("--json", action="store_true", help="print exactly one JSON object")
    grade.add_argument("--seed", type=int, default=0, help="seed for the generated inputs (default 0)")
    grade.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    grade.add_argument("--timeout", type=_positive, default=20.0, metavar="S",
                       help="seconds allowed per check (default 20); the whole run gets 15×")
    grade.add_argument("--perf", action="store_true", help="time against PyTorch's SDPA once all checks pass")
    grade.set_defaults(handler=grade_command)

    init = subparsers.add_parser("init", help="copy fresh exercise stubs into a directory")
    init.add_argument("directory", type=Path)
    init.add_argument("--force", action="store_true", help="overwrite files that already exist")
    init.set_defaults(handler=init_command)


def _positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive number of seconds")
    return value


def grade_command(args: argparse.Namespace) -> int:
    from rich.console import Console

    from quizprep.grader.exercises import UnknownExercise
    from quizprep.grader.grade import GradeOptions, grade
    from quizprep.grader.report import render, to_json
    from quizprep.grader.session import Limits

    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            print("quizprep grade: --device cuda, but no CUDA device is available", file=sys.stderr)
            return 2
    limits = Limits(check_seconds=args.timeout, total_seconds=args.timeout * 15)
    options = GradeOptions(exercise=args.exercise, seed=args.seed, device=args.device, limits=limits,
                           perf=args.perf)
    try:
        report = grade(args.path, options)
    except (UnknownExercise, FileNotFoundError) as error:
        print(f"quizprep grade: {error.args[0]}", file=sys.stderr)
        return 2
    if args.json:
        print(to_json(report))
    else:
        render(report, Console())
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
