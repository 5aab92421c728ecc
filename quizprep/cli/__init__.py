"""The `quizprep` command line: one subcommand per part, each registered by its own module.

This package is the layer that wires the others (the layers are import-linter contracts in
pyproject.toml): `quiz` opens the quiz app (`cli.quiz`), `grade` runs the grader
(`cli.grade_command`) and records its report in study (`cli.grade`), `stats` renders the
data study computes (`cli.progress`), `check` compares the banks with the progress database
(`cli.check`). Below it, the quiz app (`tui`) sits on `study`, `study` on `bank`; the grader
imports none of them."""
from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
import threading
from typing import NoReturn

from quizprep import __version__

# Each module exposes register(subparsers); none imports torch at module level.
QUIZ_COMMAND = "quizprep.cli.quiz"
COMMAND_MODULES = (
    QUIZ_COMMAND,
    "quizprep.cli.check",
    "quizprep.cli.grade",
    "quizprep.budget_command",
    "quizprep.cli.progress",
    "quizprep.export",
    "quizprep.cli.serve",
)
# Options that belong to `quizprep` itself; any other leading option is a quiz option.
TOP_LEVEL_OPTIONS = ("-h", "--help", "--version")
EXAMPLES = """examples:
  quizprep                              open the quiz app
  quizprep --db x.db --topic memory     quiz options work without the word quiz
  quizprep quiz --question ID           one question, e.g. the one a grader report names
  quizprep grade my-exercises/mha.py    grade an exercise and name its bugs
  quizprep budget --model llama-3-8b --seq 128k
  quizprep export --anki deck.apkg      the banks as an Anki deck (--json FILE for other tools)
  quizprep serve                        the quiz app in a browser, on http://localhost:8000

Run `quizprep COMMAND --help` for a command's options."""


def build_parser(command_modules: tuple[str, ...] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quizprep",
        description="Interview prep for attention: a terminal quiz app and an exercise grader.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"quizprep {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for module_name in command_modules:
        importlib.import_module(module_name).register(subparsers)
    return parser


def _replace_what_the_terminal_cannot_show() -> None:
    """Reports use ✓, ×, · and √: on a terminal or pipe whose encoding lacks them (PYTHONIOENCODING=ascii,
    a C locale) each becomes ? rather than ending the command with a UnicodeEncodeError."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")


def main(argv: list[str] | None = None) -> int:
    """Run one command. Without `argv` this is the `quizprep` command itself, whose process ends
    with the command."""
    exiting = argv is None
    _replace_what_the_terminal_cannot_show()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in TOP_LEVEL_OPTIONS):
        argv.insert(0, "quiz")
    # Opening the quiz app is the daily start and is timed (benchmarks/quiz_startup.py): it
    # skips importing the other commands' modules.
    parser = build_parser((QUIZ_COMMAND,) if argv[0] == "quiz" else COMMAND_MODULES)
    args = parser.parse_args(argv)
    try:
        status = int(args.handler(args) or 0)
    except BrokenPipeError:
        # `quizprep grade x.py --json | head`: the reader left; Python must not complain on exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 1
    if exiting:
        end_process(status)
    return status


def end_process(status: int) -> NoReturn:
    """End the process now, with `status`. The interpreter's own exit would then tear down every
    module and object (after a grade, all that torch made: half a second and a second of CPU) to
    free memory the kernel frees anyway. What that exit owes the user is done first: the other
    non-daemon threads finished, the atexit callbacks run (temporary folders' finalizers among
    them), the open standard streams flushed (a failed flush exits 120, as Python's own exit does)."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is None or stream.closed:
            continue
        try:
            stream.flush()
        except OSError:
            status = 120
    os._exit(status)
