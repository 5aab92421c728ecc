"""`quizprep stats` (progress in the terminal), `quizprep report --out FILE.md|FILE.html` and
`quizprep flags` (the questions flagged as wrong). Study computes the data; this module renders it."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from quizprep.cli.options import add_db_option, any_missing

if TYPE_CHECKING:
    from rich.console import RenderableType

    from quizprep.bank.loader import LoadResult
    from quizprep.study.stats import Stats
    from quizprep.study.store import Store


def register(subparsers: argparse._SubParsersAction) -> None:
    stats = subparsers.add_parser(
        "stats", help="show progress in the terminal",
        description="Accuracy and mastery per topic, the rubric criteria missed most often, streak, "
                    "answers per day and what is due, without opening the app.",
    )
    _common_options(stats)
    stats.set_defaults(handler=run_stats)

    report = subparsers.add_parser(
        "report", help="write a self-assessment report (Markdown or HTML)",
        description="Write a self-assessment report to keep or show a coach.",
    )
    report.add_argument("--out", type=Path, required=True, metavar="FILE",
                        help="FILE.md for Markdown, FILE.html for a standalone web page")
    _common_options(report)
    report.set_defaults(handler=run_report)

    flags = subparsers.add_parser(
        "flags", help="show the questions flagged as wrong",
        description="Print flagged-questions.md, where the app collects the questions you flagged "
                    "as wrong (it lies next to the progress database): send it to the bank's maintainers.",
    )
    add_db_option(flags, "beside which flagged-questions.md lies")
    flags.set_defaults(handler=run_flags)


def run_flags(args: argparse.Namespace) -> int:
    from quizprep.study.flags import flags_path

    path = flags_path(args.db)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        print(f"No question has been flagged yet (flags are written to {path}).")
        return 0
    except (OSError, UnicodeDecodeError) as error:
        print(f"quizprep flags: cannot read {path}: {error}", file=sys.stderr)
        return 1
    print(f"{path}\n\n{text}", end="")
    return 0


def _common_options(parser: argparse.ArgumentParser) -> None:
    add_db_option(parser, "to read, never to write")
    parser.add_argument("--bank", action="append", default=[], type=Path, metavar="PATH",
                        help="question bank file or folder (repeatable; default: the shipped banks)")


def _open(args: argparse.Namespace, command: str) -> tuple[Store, LoadResult] | int:
    """The store and the banks, or an exit code after saying what went wrong."""
    from quizprep.bank.loader import load_banks
    from quizprep.study.dbpath import resolve_db_path
    from quizprep.study.store import Store, StoreError

    if any_missing(command, args.bank):
        return 2
    result = load_banks(args.bank or None)
    for error in result.errors:
        print(f"warning: skipped: {error}", file=sys.stderr)
    if args.db and not resolve_db_path(args.db).exists():  # a typo would read as an empty history: all zeros
        print(f"quizprep {command}: no progress database at {args.db}; nothing was read or created "
              "(leave out --db for your own progress)", file=sys.stderr)
        return 1
    try:
        store = Store.open(args.db, readonly=True)  # a report never writes, nor waits for a writer
    except StoreError as error:
        print(f"quizprep {command}: {error}", file=sys.stderr)
        return 1
    for notice in store.notices:
        print(f"notice: {notice}", file=sys.stderr)
    return store, result


def run_stats(args: argparse.Namespace) -> int:
    from rich.console import Console

    from quizprep.study.charts import progress_charts
    from quizprep.study.stats import compute_stats
    from quizprep.tui.charts import renderables

    opened = _open(args, "stats")
    if isinstance(opened, int):
        return opened
    store, result = opened
    titles = result.titles()
    with store:
        stats = compute_stats(store, result.questions, titles=titles)
        charts = progress_charts(store, result.questions, stats.generated_at, titles=titles)
    console = Console()
    for renderable in [*stats_renderables(stats, console.width), *renderables(charts, console.width)]:
        console.print(renderable)
    return 0


def run_report(args: argparse.Namespace) -> int:
    from quizprep.study.report import build_report, write_report

    if args.out.suffix.lower() not in (".md", ".html", ".htm"):
        print(f"quizprep report: --out must end in .md or .html, got {args.out.name!r}", file=sys.stderr)
        return 2
    opened = _open(args, "report")
    if isinstance(opened, int):
        return opened
    store, result = opened
    with store:
        report = build_report(store, result.questions, titles=result.titles())
    try:
        path = write_report(args.out, report)
    except OSError as error:
        print(f"quizprep report: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


def stats_renderables(stats: Stats, width: int = 80) -> list[RenderableType]:
    """What `quizprep stats` prints, laid out for a terminal `width` columns wide."""
    from rich.table import Table
    from rich.text import Text

    from quizprep.study.report_sections import days
    from quizprep.study.overview import percent

    summary = Text.assemble(
        ("Progress  ", "bold"), f"{stats.total_answers} answers · accuracy {percent(stats.accuracy)} · ",
        (f"streak {days(stats.streak_days)}", "bold green" if stats.streak_days else ""),
    )
    topics = topics_table(stats, width)

    missed = Table(title="Rubric criteria missed most often", title_justify="left")
    missed.add_column("Question")
    missed.add_column("Criterion")
    missed.add_column("Missed", justify="right")
    for m in stats.missed_criteria[:10]:
        missed.add_row(m.question_id, m.criterion, f"{m.missed} of {m.assessed}")

    history = Table(title="Answers per day (last 30 days)", title_justify="left", show_header=False, box=None)
    most = max((d.answers for d in stats.history), default=0)
    for d in stats.history:
        if d.answers:
            right = round(30 * d.correct / most)
            wrong = max(1, round(30 * d.answers / most)) - right
            history.add_row(d.day.isoformat(), Text.assemble(("█" * right, "green"), ("█" * wrong, "red")),
                            f"{d.answers} ({d.correct} right)")

    due = Table(title="Due in the coming days", title_justify="left")
    due.add_column("Day")
    due.add_column("Due", justify="right")
    for place, (day, count) in enumerate(stats.due_ahead):
        # Today's count as Home's when they differ: Home counts only what is due now.
        now = f" ({stats.due_now} due now)" if place == 0 and count != stats.due_now else ""
        due.add_row(day.strftime("%a %Y-%m-%d"), f"{count}{now}")

    parts: list[RenderableType] = [summary, topics]
    if stats.exercises:
        parts.append(exercises_table(stats))
    parts.append(missed if stats.missed_criteria else Text("No rubric criteria missed yet."))
    parts.append(history if most else Text("No answers yet."))
    parts.append(due)
    return parts


def topics_table(stats: Stats, width: int) -> RenderableType:
    """One line per topic; titles whole when they all fit beside the numbers, else short, and a
    short one still too wide cut with an ellipsis, as on Home (wrapped, three topics took two
    lines at 80 columns)."""
    from rich.table import Table
    from rich.text import Text

    from quizprep.study.overview import percent
    from quizprep.tui.titles import titles_within

    headers = ("Seen", "Due", "Answers", "Accuracy", "Mastery")
    rows = [(f"{t.seen}/{t.questions}", str(t.due), str(t.attempts), percent(t.accuracy), percent(t.mastery))
            for t in stats.topics]
    numbers = sum(max(len(cell) for cell in column) + 2 for column in zip(headers, *rows))
    room = width - numbers - 2 - (len(headers) + 2)  # the title's padding, then one border per column and edge
    table = Table(title="Topics", title_justify="left")
    table.add_column("Topic", no_wrap=True, overflow="ellipsis", max_width=room)
    for column in headers:
        table.add_column(column, justify="right", no_wrap=True)
    for title, cells in zip(titles_within([t.title for t in stats.topics], room), rows):
        table.add_row(Text(title), *cells)
    return table


def exercises_table(stats: Stats) -> RenderableType:
    """The latest grade of each exercise (`quizprep grade`), with the mistakes it still had."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Exercises", title_justify="left")
    for column in ("Exercise", "Last graded", "Score", "Open diagnoses"):
        table.add_column(column, justify="right" if column == "Score" else "left")
    for e in stats.exercises:  # Text cells: a diagnosis such as "[h·d, (h+1)·d)" is not Rich markup
        table.add_row(Text(e.exercise), e.graded_at.astimezone().strftime("%Y-%m-%d %H:%M"), f"{e.score:.0%}",
                      Text("passed" if e.passed else "; ".join(e.open_diagnoses) or "failed (no named mistake)"))
    return table
