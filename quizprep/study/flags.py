"""Questions a learner flags as wrong, collected in a Markdown file a maintainer can read.

The file, flagged-questions.md, lies next to the progress database. Entries are only ever
appended, so nothing a learner wrote is lost.
"""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from quizprep.study.dbpath import resolve_db_path

FLAG_FILE = "flagged-questions.md"
HEADER = ("# Flagged questions\n\n"
          "Questions a learner flagged as wrong in quizprep, oldest first: the question id, when, and why.\n"
          "Maintainers: fix the question in its bank file (`quizprep check` names file and line).\n")


def flags_path(db_path: str | Path | None = None) -> Path:
    """flagged-questions.md beside the progress database (`--db`, else the default one)."""
    return resolve_db_path(db_path).with_name(FLAG_FILE)


def flag_question(question_id: str, reason: str, *, now: datetime, path: Path | None = None,
                  source: str | None = None) -> Path:
    """Append an entry for `question_id` to `path` (default: `flags_path()`) and return the file.
    `source` is where the question is written (bank file:line), when known."""
    text = reason.strip()
    if not text:
        raise ValueError("say what is wrong with the question")
    path = path or flags_path()
    where = f" ({source})" if source else ""
    quoted = "\n".join(f"> {line}".rstrip() for line in text.splitlines())
    entry = f"\n## {question_id}{where}\n\nFlagged {now.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC:\n\n{quoted}\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        if handle.tell() == 0:
            handle.write(HEADER)
        handle.write(entry)
    return path
