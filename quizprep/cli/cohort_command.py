"""`quizprep grade DIR --exercise NAME`: a class's submissions, one row each (table, JSON or CSV)."""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from quizprep.grader import exercism
from quizprep.grader.bounds import json_text, printable
from quizprep.grader.cohort import CohortRow, default_jobs, grade_folder, submissions
from quizprep.grader.grade import GradeOptions, exit_on_termination_signals
from quizprep.grader.jail import launch as jail_launch
from quizprep.grader.jail.applied import fallback_note
from quizprep.grader.worker_session import Limits

CSV_COLUMNS = ("file", "score", "passed", "failed", "diagnoses", "seconds", "seed", "error", "read_this")

# What no grade can vouch for (README, "Reliability of the grader"): a pass is a pass of the
# checks, not proof that the code did not reach a forbidden kernel by these routes.
NOT_PROCTORED = ("the forbidden kernels' machine code is trapped in the learner's process, so calling "
                 "libtorch through ctypes or undoing the guard in memory stops there, but code that brings "
                 "its own machine code (a copy of a kernel's bytes mapped over the trap, libtorch's unexported "
                 "functions called by address) can still pass; read the code of a surprising pass")


def cohort_command(args: argparse.Namespace, limits: Limits) -> int:
    folder: Path = args.path
    files = submissions(folder)
    if not files:
        print(f"quizprep grade: no .py files in {folder}", file=sys.stderr)
        return 2
    exit_on_termination_signals()
    _one_torch_thread()
    options = GradeOptions(exercise=args.exercise, device=args.device, limits=limits)
    jobs = args.jobs or default_jobs()
    if args.json:
        rows = grade_folder(folder, options, jobs=jobs, seed=args.seed, fresh=args.fresh_workers)
    else:
        rows = _with_progress(folder, options, jobs, args, len(files))
    written: dict[str, str] = {}
    if args.format == "exercism":
        folders = exercism.submission_folders(args.output_dir, [Path(row.file).name for row in rows])
        for row, results in zip(rows, folders):
            exercism.write(_exercism_payload(row), results)
            written[row.file] = results.name
    if args.csv is not None:
        write_csv(rows, args.csv)
    if args.json:
        print(json_text({"exercise": args.exercise, "proctored": False, "not_proctored": NOT_PROCTORED,
                         "jail": fallback_note(jail_launch.refused()) or "each file in namespaces of its own",
                         "submissions": [row.summary() for row in rows]}))
    else:
        Console().print(table(rows, args.exercise, written))
    return 0


def _with_progress(folder: Path, options: GradeOptions, jobs: int, args: argparse.Namespace,
                   total: int) -> list[CohortRow]:
    columns = (TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[last]}"))
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("grading", total=total, last="")
        return grade_folder(folder, options, jobs=jobs, seed=args.seed, fresh=args.fresh_workers,
                            on_done=lambda row: progress.update(task, advance=1, last=_shown(row.file)))


def _shown(file: str) -> str:
    """A file name as plain, one-line text in the progress bar (whose text is markup)."""
    return escape(printable(file, one_line=True))


def _exercism_payload(row: CohortRow) -> dict[str, Any]:
    if row.report is None:
        return exercism.error_results(f"the grader could not grade this file: {row.error}")
    return exercism.results(row.report)


# A cell starting with one of these is a formula to a spreadsheet (OWASP's "CSV injection"): a file
# named "=HYPERLINK(…).py" would run in the instructor's grade book.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def write_csv(rows: list[CohortRow], target: Path) -> None:
    """One line per submission; lists of ids are space-separated; text that a spreadsheet would
    read as a formula is quoted with a leading apostrophe."""
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for row in rows:
            data = row.summary()
            data["failed"] = " ".join(row.failed)
            data["diagnoses"] = " ".join(row.diagnoses)
            data["read_this"] = "; ".join(row.read_this)
            writer.writerow({key: spreadsheet_text(value) for key, value in data.items()})


def spreadsheet_text(value: Any) -> Any:
    """`value` as a spreadsheet shows it and never runs it, with hidden characters escaped as in
    the table (a file name's ESC, zero-width space or bidirectional override)."""
    if not isinstance(value, str):
        return value
    shown = printable(value, one_line=True)
    return f"'{shown}" if shown.startswith(FORMULA_STARTS) else shown


def table(rows: list[CohortRow], exercise: str, results: dict[str, str] | None = None) -> Table:
    """One row per submission; `results` maps a file to its results folder (--format exercism),
    named in the row when it is not the file's own name."""
    passed = sum(row.passed for row in rows)
    grid = Table(title=f"{exercise}: {passed} of {len(rows)} submissions pass",
                 caption="\n".join(filter(None, (f"Not proctored: {NOT_PROCTORED}",
                                                  fallback_note(jail_launch.refused())))))
    for name, justify in (("file", "left"), ("score", "right"), ("passed", "center"), ("failed checks", "left"),
                          ("diagnoses", "left"), ("s", "right")):
        grid.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in rows:
        failed = row.error or ", ".join(row.failed)
        folder = (results or {}).get(row.file, Path(row.file).stem)
        file = row.file if folder == Path(row.file).stem else f"{row.file} → {folder}/"
        read = [f"read this one: {'; '.join(row.read_this)}"] if row.read_this else []
        # learner-derived cells as Text: a file named "[green]yes[/].py" is not markup, and its
        # control characters show as escapes
        grid.add_row(Text(printable(file, one_line=True)), f"{row.score:.0%}",
                     "[green]yes[/]" if row.passed else "[red]no[/]", Text(printable(failed, one_line=True)),
                     Text(", ".join([*row.diagnoses, *read])), f"{row.seconds:.1f}")
    return grid


def _one_torch_thread() -> None:
    """The grader's own torch work is small float64 references, run from one thread per job:
    torch's intra-op threads would only compete with the jobs for the cores (measured on 2 cores,
    40 mha files, one job: the grader's CPU time fell from 8.8–10.9 s to 3.6–4.5 s)."""
    import torch

    torch.set_num_threads(1)
