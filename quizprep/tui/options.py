"""What `quizprep quiz` was asked for on the command line, read once and handed to the app."""
from __future__ import annotations

from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Mapping, NamedTuple, Sequence


class QuizOptions(NamedTuple):
    """The banks and database to open, what to study and what to start with. `length`,
    `interview`, `search_text` and `tags` are only where the app starts: the learner changes
    them on Home, and the app keeps the current ones."""

    banks: Sequence[str | Path] | None = None  # None: the shipped banks
    topics: Sequence[str] = ()
    db: str | Path | None = None  # None: $QUIZPREP_DB, else the user data folder
    mode: str | None = None  # a session to start right away
    question: str | None = None  # the one question to ask right away
    length: int | None = None  # questions per session (a mock's count); None: the length saved last time
    minutes: float | None = None  # a mock's time limit; None: the default time per question
    interview: date | None = None  # None: the date saved by an earlier run, if any
    search_text: str = ""
    tags: Sequence[str] = ()
    # "new"/"reviews" to save; the default is read-only, as it is shared by every QuizOptions
    daily_limits: Mapping[str, int | None] = MappingProxyType({})
