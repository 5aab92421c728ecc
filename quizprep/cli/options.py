"""Options that several commands share, defined once so that they read and behave alike."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Iterable

from quizprep.study.dbpath import DB_ENV, DB_FILENAME


def add_db_option(parser: argparse.ArgumentParser, purpose: str) -> None:
    """`--db FILE`, the progress database; `purpose` completes "progress database …" with what
    this command does with it. `quizprep.study.dbpath.resolve_db_path` turns the value (a Path,
    or None when left out) into the file."""
    parser.add_argument("--db", type=Path, metavar="FILE",
                        help=f"progress database {purpose} (default: ${DB_ENV}, else {DB_FILENAME} in your "
                             "user data folder)")


def any_missing(command: str, paths: Iterable[Path], what: str = "bank file or folder") -> bool:
    """Whether any of `paths` does not exist, after naming them on stderr as `quizprep COMMAND`
    (the command then exits 2)."""
    missing = [str(path) for path in paths if not path.exists()]
    if missing:
        print(f"quizprep {command}: no such {what}: {', '.join(missing)}", file=sys.stderr)
    return bool(missing)
