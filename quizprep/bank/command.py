"""`quizprep check`: validate question banks."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check", help="validate question banks (default: the shipped ones)",
        description="Validate question banks. Exit 0 when clean, 1 on any error, 2 on usage errors.",
    )
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH", help="bank files or folders")
    parser.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from quizprep.bank.loader import load_banks, summarize

    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        print(f"quizprep check: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    result = load_banks(args.paths or None)
    summary = summarize(result)
    if args.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        for error in result.errors:
            print(error)
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(summary["by_kind"].items()))
        status = f"{len(result.errors)} error(s)" if result.errors else "no errors"
        print(f"{summary['questions']} questions ({kinds or 'none'}) in {len(result.banks)} bank(s): {status}")
    return 1 if result.errors else 0
