"""`quizprep quiz` (also what `quizprep` with no command runs): open the Textual quiz app."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

MODES = ("practice", "review", "mock")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "quiz", help="open the quiz app (the default command)",
        description="Practise, review what is due, or sit a timed mock interview, in the terminal. "
                    "Progress is saved after every answer.",
    )
    parser.add_argument("--topic", action="append", default=[], metavar="T",
                        help="only this topic (repeatable)")
    parser.add_argument("--bank", action="append", default=[], type=Path, metavar="PATH",
                        help="a bank file or folder instead of the shipped banks (repeatable)")
    parser.add_argument("--db", type=Path, metavar="PATH",
                        help="progress database (default: $QUIZPREP_DB, else your user data folder)")
    parser.add_argument("--mode", choices=MODES, help="start this kind of session right away")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from quizprep.tui.app import QuizApp

    missing = [str(path) for path in args.bank if not path.exists()]
    if missing:
        print(f"quizprep quiz: no such bank file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    app = QuizApp(banks=args.bank or None, topics=args.topic, db=args.db, mode=args.mode)
    app.run()
    return app.return_code or 0
