"""Rendering a grade report: Rich for people, one JSON object for tools."""
from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from quizprep.grader.bounds import json_text, printable
from quizprep.grader.grade import GradeReport
from quizprep.grader.spec import CheckResult, FailureKind, Status

MARKS = {Status.PASS: ("✓", "green"), Status.FAIL: ("✗", "red"), Status.SKIP: ("–", "yellow"),
         Status.ERROR: ("!", "magenta")}
REPORTED = tuple(f.name for f in fields(CheckResult) if f.metadata.get("reported", True))


def to_json(report: GradeReport) -> str:
    payload: dict[str, Any] = {
        "exercise": report.exercise,
        "file": report.file,
        "passed": report.passed,
        "score": report.score,
        "checks": [_check_json(c) for c in report.checks],
        "environment": report.environment,
    }
    payload.update(report.extra)
    return json_text(payload)


def _check_json(check: CheckResult) -> dict[str, Any]:
    data = {key: value for key, value in asdict(check).items() if key in REPORTED}
    ordered = {key: data.pop(key) for key in ("id", "title", "status", "message", "diagnosis", "hint")}
    data["seconds"] = round(data["seconds"], 4)
    return {**ordered, **data}


def render(report: GradeReport, console: Console) -> None:
    """Every text from the learner's side (file name, messages, frames, printed output) is shown
    with its control characters escaped: an ESC in it could otherwise redraw the terminal."""
    file = printable(report.file, one_line=True)
    console.print(Text.assemble((f"{report.title}", "bold"), f"  ({report.exercise} · {file})"))
    stub = _untouched_stub(report)
    if stub is not None:
        console.print(stub)
        return
    for check in report.checks:
        mark, style = MARKS[check.status]
        line = Text.assemble((f" {mark} ", f"bold {style}"), check.title)
        if check.message and check.message != check.title:
            # one line each: a learner's message with line breaks could otherwise draw fake check lines
            # and a fake verdict; the details below show it whole, inside their box
            line.append(f"  — {printable(check.message, one_line=True)}",
                        style="dim" if check.status == Status.PASS else style)
        console.print(line)
    for group in _by_cause([c for c in report.checks if c.status in {Status.FAIL, Status.ERROR}]):
        console.print(_details(group[0], [c.id for c in group[1:]]))
    if report.extra.get("perf"):
        from quizprep.grader.perf import render_data

        console.print(render_data(report.extra["perf"]))
    passed = sum(c.status == Status.PASS for c in report.checks)
    counted = sum(c.status != Status.SKIP for c in report.checks)
    verdict = ("[bold green]all checks pass[/]" if report.passed
               else f"[bold red]{passed} of {counted} checks pass[/]")
    seed = report.environment.get("seed")
    console.print(f"\n{verdict}  (score {report.score:.0%}; seed {seed}: replay with --seed {seed})")


def _by_cause(failures: list[CheckResult]) -> list[list[CheckResult]]:
    """Failures grouped by cause, in report order; a failure with no known cause stands alone."""
    groups: dict[str, list[CheckResult]] = {}
    for check in failures:
        groups.setdefault(check.cause or f"check:{check.id}", []).append(check)
    return list(groups.values())


def _untouched_stub(report: GradeReport) -> Text | None:
    """One line for a file whose every check stops at a `raise NotImplementedError`."""
    failures = [c for c in report.checks if c.id != "load" and c.status != Status.SKIP]
    stub = FailureKind.NOT_IMPLEMENTED
    if not failures or not all(c.status == Status.FAIL and c.failure_kind == stub for c in failures):
        return None
    where = printable(failures[0].traceback[-1] if failures[0].traceback else report.file, one_line=True)
    return Text.assemble(("Not started yet: ", "bold yellow"), f"{where}. ",
                         "Replace that `raise NotImplementedError` with your implementation; the docstring at the "
                         f"top of the file states the contract. {len(failures)} checks are waiting.")


def _details(check: CheckResult, same_cause: list[str]) -> Panel:
    parts: list[Any] = [Text(printable(check.message), style="bold")]
    if same_cause:
        parts.append(Text.assemble(("Same cause: ", "bold cyan"), f"also fails {', '.join(same_cause)}"))
    for label, value in (("Tried", check.tried), ("Smallest failing case", check.smallest),
                         ("Where", check.where), ("Diagnosis", check.diagnosis), ("Hint", check.hint)):
        if value:
            parts.append(Text.assemble((f"{label}: ", "bold cyan"), printable(value)))
    if check.quiz:
        parts.append(Text.assemble(("Learn it: ", "bold cyan"), f"quizprep --question {check.quiz}"))
    if check.traceback:
        parts.append(Text("Your code:", style="bold cyan"))
        parts += [Text(f"  {printable(line, one_line=True)}") for line in check.traceback]
    if check.output.strip():
        parts.append(Text("What your code printed:", style="bold cyan"))
        parts.append(Text(printable(check.output.rstrip())))
    return Panel(Group(*parts), title=f"✗ {check.id}", title_align="left", border_style="red")
