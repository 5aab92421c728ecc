"""The `quizprep` command line: one subcommand per part, each registered by its own module."""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from quizprep import __version__

# Each module exposes register(subparsers); none imports torch at module level.
QUIZ_COMMAND = "quizprep.tui.command"
COMMAND_MODULES = (
    QUIZ_COMMAND,
    "quizprep.bank.command",
    "quizprep.grader.command",
    "quizprep.budget_command",
    "quizprep.study.command",
)


def build_parser(command_modules: tuple[str, ...] = COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quizprep",
        description="Interview prep for attention: a terminal quiz app and an exercise grader.",
        epilog="Run without a command to open the quiz app.",
    )
    parser.add_argument("--version", action="version", version=f"quizprep {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    for module_name in command_modules:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv) or ["quiz"]
    # Opening the quiz app is the daily start and is timed (benchmarks/quiz_startup.py): it
    # skips importing the other commands' modules.
    parser = build_parser((QUIZ_COMMAND,) if argv[0] == "quiz" else COMMAND_MODULES)
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except BrokenPipeError:
        # `quizprep grade x.py --json | head`: the reader left; Python must not complain on exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
