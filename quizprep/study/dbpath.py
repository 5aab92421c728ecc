"""Where the progress database is: the `--db` option, else `$QUIZPREP_DB`, else the data folder."""
from __future__ import annotations

import os
from pathlib import Path

DB_ENV = "QUIZPREP_DB"
DB_FILENAME = "progress.sqlite3"


def default_db_path() -> Path:
    """`$QUIZPREP_DB` when set, else progress.sqlite3 in the user's data directory."""
    if os.environ.get(DB_ENV):
        return Path(os.environ[DB_ENV]).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("quizprep", appauthor=False)) / DB_FILENAME


def resolve_db_path(explicit: str | Path | None = None) -> Path:
    """The database for a `--db` option: the option if given, else `default_db_path()`."""
    return Path(explicit).expanduser() if explicit else default_db_path()
