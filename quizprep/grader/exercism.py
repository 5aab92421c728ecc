"""A grade report as Exercism's test-runner ``results.json``, interface version 3.

The format follows Exercism's "The Test Runner Interface"
(https://exercism.org/docs/building/tooling/test-runners/interface, source in
github.com/exercism/docs, building/tooling/test-runners/interface.md):

* top level: ``version`` (3); ``status`` — ``pass`` when every test passed, ``fail`` when at
  least one test failed or errored, ``error`` when no test was executed (here: the file did not
  load); ``message`` only with ``error``, saying what went wrong with paths shown as
  ``<solution-dir>/…``; ``tests`` with ``pass`` and ``fail``, in the order the tests run;
* per test: ``name``, ``status`` (``pass`` | ``fail`` | ``error``), ``test_code`` — the calls the
  check made into the learner's code, e.g. ``MultiHeadAttention(d_model=8, n_heads=2)(query=float32[2, 5, 8],
  ...)`` (tensors by dtype and shape: the inputs themselves are secret), ``message`` for a test that
  did not pass (the whole failure: what was tried, where it differs, the diagnosis, the hint, the
  learner's frames), ``output`` — only what the learner's code printed, limited to 500 characters
  (longer output is cut, with the interface's truncation notice) — and ``task_id`` where the
  check called exactly one of the stub's entry points and the stub has several: task N is the
  N-th of the exercise's entry points (kv_cache: 1 ``append_kv``, 2 ``decode_step``).

The interface has no "skipped" test: a check that did not run is an ``error`` naming why, except
in a passing report, where the skipped checks are the ones that do not apply here (e.g. CUDA-only)
and are left out. The runner's exit status is 0 whenever ``results.json`` was written.
"""
from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from quizprep.grader.bounds import json_text
from quizprep.grader.grade import GradeReport
from quizprep.grader.spec import CheckResult, Status, Word

VERSION = 3
OUTPUT_LIMIT = 500
TRUNCATED = "Output was truncated. Please limit to 500 chars"
SOLUTION_DIR = "<solution-dir>"
RESULTS_FILE = "results.json"


class Outcome(Word):
    """A status in results.json, of a whole run or of one test: the interface's three words."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"


def results(report: GradeReport) -> dict[str, Any]:
    """The results.json object for one graded file."""
    load = next((c for c in report.checks if c.id == "load"), None)
    if load is not None and load.status != Status.PASS:
        printed = f"\nWhat your code printed:\n{load.output.rstrip()}" if load.output.strip() else ""
        return error_results(_shown_paths(_failure_text(load) + printed, report.file))
    tasks = _tasks(report.exercise)
    tests = [_test(check, report.file, tasks) for check in report.checks
             if not (report.passed and check.status == Status.SKIP)]
    status = Outcome.PASS if report.passed and all(t["status"] == Outcome.PASS for t in tests) else Outcome.FAIL
    return {"version": VERSION, "status": status, "tests": tests}


def error_results(message: str) -> dict[str, Any]:
    """No test was executed: the file did not load, or could not be graded at all."""
    return {"version": VERSION, "status": Outcome.ERROR, "message": message}


def write(payload: dict[str, Any], directory: Path) -> Path:
    """Write `payload` as DIRECTORY/results.json (creating DIRECTORY) and return the file's path;
    a results.json that is a symbolic link is refused, not followed."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / RESULTS_FILE
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with open(fd, "w", encoding="utf-8") as handle:
        handle.write(json_text(payload, indent=2) + "\n")
    return target


def submission_folders(root: Path, file_names: list[str]) -> list[Path]:
    """ROOT/<name> for each submission's results, in order: its file name without .py, every
    character but ASCII letters, digits, '_', '-' and '.' replaced by '_', no leading dot (so never
    '.' or '..'), never an existing symbolic link. Names unique, and unique whatever their case (on
    macOS's and Windows' disks Alice/ and alice/ are one folder): a file whose name needed no change
    keeps it, so "alice smith.py" (alice_smith-2) never takes alice_smith.py's folder; unless another
    such name differs from it only in case (A_B.py, a_b.py): then neither has it, so that a script
    reading OUT/a_b/ on such a disk finds no folder rather than the other file's results."""
    names = [re.sub(r"[^A-Za-z0-9_.-]", "_", file.removesuffix(".py")).lstrip(".") or "submission"
             for file in file_names]
    unchanged = {i for i, (name, file) in enumerate(zip(names, file_names)) if name == file.removesuffix(".py")}
    reserved = {names[i].casefold() for i in unchanged}
    cases = Counter(name.casefold() for name in {names[i] for i in unchanged})  # spellings, not files
    exact = {i for i in unchanged if cases[names[i].casefold()] == 1}
    taken: set[str] = set()

    def free(name: str) -> bool:
        return name.casefold() not in taken and not (root / name).is_symlink()

    claimed: set[int] = set()
    for index in sorted(exact):
        if free(names[index]):
            taken.add(names[index].casefold())
            claimed.add(index)
    for index in (i for i in range(len(names)) if i not in claimed):
        name, count = names[index], 1
        while not free(names[index]) or names[index].casefold() in reserved:
            count += 1
            names[index] = f"{name}-{count}"
        taken.add(names[index].casefold())
    return [root / name for name in names]


def capped_output(output: str) -> str:
    """At most OUTPUT_LIMIT characters; longer output keeps its end behind the truncation notice."""
    if len(output) <= OUTPUT_LIMIT:
        return output
    kept = OUTPUT_LIMIT - len(TRUNCATED) - 1
    return f"{TRUNCATED}\n{output[-kept:]}"


def _tasks(exercise: str) -> dict[str, int]:
    """Task numbers by entry point, for an exercise whose stub defines several (else none)."""
    from quizprep.grader.exercises import UnknownExercise, load_spec

    try:
        entry_points = load_spec(exercise).entry_points
    except UnknownExercise:
        return {}
    return {name: number for number, name in enumerate(entry_points, 1)} if len(entry_points) > 1 else {}


def _test(check: CheckResult, file: str, tasks: dict[str, int]) -> dict[str, Any]:
    if check.status == Status.SKIP:
        return {"name": check.title, "status": Outcome.ERROR, "message": f"not run: {check.message}"}
    status = {Status.PASS: Outcome.PASS, Status.FAIL: Outcome.FAIL}.get(check.status, Outcome.ERROR)
    test: dict[str, Any] = {"name": check.title, "status": status}
    if check.test_code:
        test["test_code"] = check.test_code
    if len(check.targets) == 1 and check.targets[0] in tasks:
        test["task_id"] = tasks[check.targets[0]]
    if status != Outcome.PASS:
        test["message"] = _shown_paths(_failure_text(check), file)
    if check.output.strip():
        test["output"] = capped_output(check.output)
    return test


def _failure_text(check: CheckResult) -> str:
    lines = [check.message]
    for label, value in (("Tried", check.tried), ("Smallest failing case", check.smallest),
                         ("Where", check.where), ("Diagnosis", check.diagnosis), ("Hint", check.hint)):
        if value:
            lines.append(f"{label}: {value}")
    if check.quiz:
        lines.append(f"Learn it: quizprep --question {check.quiz}")
    if check.traceback:
        lines.append("Your code:")
        lines += [f"  {frame}" for frame in check.traceback]
    return "\n".join(lines)


def _shown_paths(text: str, file: str) -> str:
    """The submission's folder as <solution-dir>, as the interface asks for paths in messages."""
    folder = str(Path(file).resolve().parent)
    return text.replace(folder + "/", SOLUTION_DIR + "/")
