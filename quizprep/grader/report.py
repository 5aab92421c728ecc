"""Rendering a grade report: Rich for people, one JSON object for tools."""
from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from quizprep.grader.grade import GradeReport

MARKS = {"pass": ("✓", "green"), "fail": ("✗", "red"), "skip": ("–", "yellow"), "error": ("!", "magenta")}


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
    return json.dumps(payload, ensure_ascii=False)


def _check_json(check: Any) -> dict[str, Any]:
    data = asdict(check)
    ordered = {key: data.pop(key) for key in ("id", "title", "status", "message", "diagnosis", "hint")}
    data["seconds"] = round(data["seconds"], 4)
    return {**ordered, **data}


def render(report: GradeReport, console: Console) -> None:
    console.print(Text.assemble((f"{report.title}", "bold"), f"  ({report.exercise} · {report.file})"))
    for check in report.checks:
        mark, style = MARKS[check.status]
        line = Text.assemble((f" {mark} ", f"bold {style}"), check.title)
        if check.message and check.message != check.title:
            line.append(f"  — {check.message}", style="dim" if check.status == "pass" else style)
        console.print(line)
    explained: dict[str, str] = {}
    for check in report.checks:
        if check.status not in {"fail", "error"}:
            continue
        first = explained.get(check.diagnosis_id) if check.diagnosis_id else None
        if first is None:
            console.print(_details(check))
            explained.setdefault(check.diagnosis_id, check.id)
        else:
            console.print(Text.assemble(("✗ ", "bold red"), (check.id, "bold"),
                                        f": {check.message} — same diagnosis as {first}", style=""))
    if report.extra.get("perf"):
        from quizprep.grader.perf import render_data

        console.print(render_data(report.extra["perf"]))
    passed = sum(c.status == "pass" for c in report.checks)
    counted = sum(c.status != "skip" for c in report.checks)
    verdict = ("[bold green]all checks pass[/]" if report.passed
               else f"[bold red]{passed} of {counted} checks pass[/]")
    console.print(f"\n{verdict}  (score {report.score:.0%})")


def _details(check: Any) -> Panel:
    parts: list[Any] = [Text(check.message, style="bold")]
    for label, value in (("Tried", check.tried), ("Smallest failing case", check.smallest),
                         ("Where", check.where), ("Diagnosis", check.diagnosis), ("Hint", check.hint)):
        if value:
            parts.append(Text.assemble((f"{label}: ", "bold cyan"), value))
    if check.quiz:
        parts.append(Text.assemble(("Learn it: ", "bold cyan"), f"quiz question {check.quiz}"))
    if check.traceback:
        parts.append(Text("Your code:", style="bold cyan"))
        parts += [Text(f"  {line}") for line in check.traceback]
    if check.output.strip():
        parts.append(Text("What your code printed:", style="bold cyan"))
        parts.append(Text(check.output.rstrip()))
    return Panel(Group(*parts), title=f"✗ {check.id}", title_align="left", border_style="red")
