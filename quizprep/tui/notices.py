"""What the quiz app says as it opens: progress database problems, questions its banks skipped
and topics with no questions."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Sequence

from textual.app import App

if TYPE_CHECKING:
    from quizprep.bank.summary import BankSummary

WARNINGS_SHOWN = 4


def readable_path(file: str) -> str:
    """`file` relative to the working directory when it lies below it: short enough for a toast."""
    relative = os.path.relpath(file)
    return file if relative.startswith("..") else relative


def notify_database(app: App, notices: Sequence[str]) -> None:
    for notice in notices:
        app.notify(notice, title="Progress database", severity="error", timeout=30, markup=False)


def notify_start(app: App, store_notices: Sequence[str], banks: BankSummary, topics: Sequence[str]) -> None:
    """The store's notices, the first WARNINGS_SHOWN skipped questions (and how many more), and
    the `topics` asked for that have no questions."""
    notify_database(app, store_notices)
    warnings = [str(error._replace(file=readable_path(error.file))) for error in banks.errors]
    for line in warnings[:WARNINGS_SHOWN]:
        app.notify(line, title="Question skipped", severity="warning", timeout=20, markup=False)
    if len(warnings) > WARNINGS_SHOWN:
        app.notify(f"…and {len(warnings) - WARNINGS_SHOWN} more; `quizprep check` lists them all.",
                   title="Questions skipped", severity="warning", timeout=20)
    missing = set(topics) - {q.topic for q in banks.questions}
    if missing:
        app.notify(f"No questions in topic(s): {', '.join(sorted(missing))}", severity="error", markup=False)
