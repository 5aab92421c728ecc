"""Options that several commands share, defined once so that they read and behave alike."""
from __future__ import annotations

import argparse
from pathlib import Path

from quizprep.study.dbpath import DB_ENV, DB_FILENAME


def add_db_option(parser: argparse.ArgumentParser, purpose: str) -> None:
    """`--db FILE`, the progress database; `purpose` completes "progress database …" with what
    this command does with it. `quizprep.study.dbpath.resolve_db_path` turns the value (a Path,
    or None when left out) into the file."""
    parser.add_argument("--db", type=Path, metavar="FILE",
                        help=f"progress database {purpose} (default: ${DB_ENV}, else {DB_FILENAME} in your "
                             "user data folder)")
