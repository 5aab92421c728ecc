"""Home's summary of the banks: each question's id and topic, the topics' titles, the merged ids
and the load's errors, which is all Home shows of them. Written beside the validated-bank cache
whenever the banks are loaded through it, with every file's cache key (`file_key`: its path and
bytes), so that the quiz app can draw Home without importing the bank model or building a single
question. An edited, added or removed file no longer matches: the app then loads the banks in
full, which writes the summary again."""
from __future__ import annotations

import marshal
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Sequence

from quizprep.bank.errors import BankError
from quizprep.bank.files import FileKey, bank_files, default_bank_dir, entry_name, file_key, owner_key, replace_entry

if TYPE_CHECKING:
    from quizprep.bank.loader import LoadResult

FORMAT = 2  # bumped when the entry's layout changes


class QuestionRef(NamedTuple):
    """A question as Home counts it: its id, for its progress, and its topic."""

    id: str
    topic: str


class BankSummary(NamedTuple):
    questions: tuple[QuestionRef, ...]  # in the banks' order, as `LoadResult.questions`
    titles: dict[str, str]  # topic → title
    merged: dict[str, tuple[str, str]]  # as `LoadResult.merged()`
    errors: tuple[BankError, ...]


def summary_of(result: LoadResult) -> BankSummary:
    return BankSummary(tuple(QuestionRef(q.id, q.topic) for q in result.questions),
                       result.titles(), result.merged(), tuple(result.errors))


def read_summary(paths: Sequence[Path | str] | None, cache_dir: Path) -> BankSummary | None:
    """The summary of the banks at `paths` as their files are now; None when there is none for
    these bytes (or a file cannot be read: the full load then says why)."""
    keys = []
    for path in bank_files(paths):
        try:
            keys.append(file_key(path, path.read_bytes()))
        except OSError:
            return None
    try:
        # Written only by save_summary; any damage means a miss.
        data = marshal.loads(_entry(cache_dir, paths).read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return _decoded(data, keys)


def save_summary(cache_dir: Path, paths: Sequence[Path | str] | None, keys: Sequence[FileKey],
                 result: LoadResult) -> None:
    """Keep `result`'s summary under `keys`, the keys of the bytes `result` was loaded from
    `paths`. It replaces the summary of `paths` as they were before, and a damaged one."""
    entry = _entry(cache_dir, paths)
    summary = summary_of(result)
    data = marshal.dumps((FORMAT, tuple(map(tuple, keys)), tuple(map(tuple, summary.questions)),
                          tuple(summary.titles.items()),
                          tuple((old, *kept) for old, kept in summary.merged.items()),
                          tuple(map(tuple, summary.errors))))
    try:
        if entry.read_bytes() == data:
            return
    except OSError:
        pass  # not written yet
    replace_entry(entry, data)


def _entry(cache_dir: Path, paths: Sequence[Path | str] | None) -> Path:
    owner = owner_key("\0".join([f"summary {FORMAT}", *map(str, paths or [default_bank_dir()])]))
    return cache_dir / f"home-{entry_name(owner)}.marshal"


def _decoded(data: Any, keys: Sequence[FileKey]) -> BankSummary | None:
    """The summary in `data` if it was made from the files `keys` name, with those very bytes:
    a file added, removed or edited since means None."""
    try:
        form, files, questions, titles, merged, errors = data
        if form != FORMAT or files != tuple(map(tuple, keys)):
            return None
        return BankSummary(tuple(QuestionRef(qid, topic) for qid, topic in questions), dict(titles),
                           {old: (kept, topic) for old, kept, topic in merged},
                           tuple(BankError(*error) for error in errors))
    except (TypeError, ValueError):
        return None
