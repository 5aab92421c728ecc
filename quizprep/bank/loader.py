"""Load question banks: find the files, read each through the validated-bank cache or validate it
afresh (`quizprep.bank.validate`), and check what spans files (duplicate ids, chains)."""
from __future__ import annotations

import gc
import pickle
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from quizprep.bank.files import (
    FileKey, bank_files, default_bank_dir, default_cache_dir, entry_name, file_key, replace_entry,
)
from quizprep.bank.model import Bank, BankError, Question, Source
from quizprep.bank.summary import save_summary

# default_bank_dir and default_cache_dir are imported from here by the command line and tests.
__all__ = ["LoadResult", "bank_files", "default_bank_dir", "default_cache_dir", "load_banks"]


@dataclass
class LoadResult:
    banks: list[Bank] = field(default_factory=list)
    errors: list[BankError] = field(default_factory=list)
    # The id of a question merged away → the id of the question that took it over.
    aliases: dict[str, str] = field(default_factory=dict)

    @property
    def questions(self) -> list[Question]:
        return [q for bank in self.banks for q in bank.questions]

    def titles(self) -> dict[str, str]:
        """Each topic's title."""
        return {bank.topic: bank.title for bank in self.banks}

    def merged(self) -> dict[str, tuple[str, str]]:
        """Each merged-away id → (the id that took it over, that question's topic)."""
        topics = {q.id: q.topic for q in self.questions}
        return {old: (kept, topics[kept]) for old, kept in self.aliases.items() if kept in topics}


def load_banks(paths: Iterable[Path | str] | None = None, cache_dir: Path | None = None) -> LoadResult:
    """Load and validate banks. With `cache_dir`, a file whose bytes were validated before is
    read back from the cache instead of being parsed and checked again (the quiz app's start-up),
    and Home's summary of the result is kept beside them (`quizprep.bank.summary`)."""
    paths = None if paths is None else list(paths)  # read twice with a cache: the files, the summary's name
    files = bank_files(paths)
    if cache_dir is None:
        with _collection_paused():
            return _combined([load_bank_file(path) for path in files])
    with _collection_paused():
        read = [_load_cached(path, cache_dir) for path in files]
    result = _combined([loaded for loaded, _key in read])
    keys = [key for _loaded, key in read if key is not None]
    if len(keys) == len(files):  # else a file could not be read: its bytes name no summary
        save_summary(cache_dir, paths, keys, result)
    return result


def _combined(loaded: list[tuple[Bank | None, list[BankError]]]) -> LoadResult:
    """The files' banks and errors, each id kept once, and the chains between them checked."""
    result = LoadResult()
    first_seen: dict[str, Source] = {}
    declared: set[str] = set()
    for bank, errors in loaded:
        result.errors.extend(errors)
        declared.update(error.id for error in errors if error.id)
        if bank is None:
            continue
        unique = []
        for question in bank.questions:
            clash = _id_clash(question, first_seen, result.aliases)
            if clash:
                result.errors.append(BankError(question.source.file, question.source.line, question.id, clash))
                declared.add(question.id)
                continue
            first_seen[question.id] = question.source
            result.aliases.update(dict.fromkeys(question.aliases, question.id))
            unique.append(question)
        result.banks.append(Bank(bank.topic, bank.title, bank.path, tuple(unique)))
    # An invalid question already has its own error; chaining to it is not a second one.
    result.errors.extend(_check_chains(result.questions, declared | first_seen.keys(), result.aliases))
    return result


def _id_clash(question: Question, first_seen: dict[str, Source], aliases: dict[str, str]) -> str | None:
    """Why the question's id or one of its aliases is taken, if one is: progress is keyed by
    these ids, so each names one question."""
    if question.id in first_seen:
        return f"duplicate id: already defined at {first_seen[question.id]}"
    for name in (question.id, *question.aliases):
        if name in aliases:
            return f"{name!r} is already an alias of [{aliases[name]}]"
        if name in first_seen:
            return f"alias {name!r} is the id of the question at {first_seen[name]}"
    return None


def _check_chains(questions: list[Question], known: set[str], aliases: dict[str, str]) -> Iterator[BankError]:
    for question in questions:
        for target in question.chain:
            if target in aliases:
                yield BankError(question.source.file, question.source.line, question.id,
                                f"chain: {target!r} was merged into [{aliases[target]}]; chain to that id")
            elif target not in known:
                yield BankError(question.source.file, question.source.line, question.id,
                                f"chain: no question has id {target!r}")


def _load_cached(path: Path, cache_dir: Path) -> tuple[tuple[Bank | None, list[BankError]], FileKey | None]:
    """The file's banks and errors, from its cache entry when the entry holds the very same bytes
    (else validated afresh and cached), and the cache key of those bytes (None when the file
    cannot be read). Entries are compared byte for byte rather than found by a digest of the
    file: hashlib loads OpenSSL, a few milliseconds of every start."""
    try:
        content = path.read_bytes()
    except OSError:
        return load_bank_file(path), None
    key = file_key(path, content)
    # One entry per file and version of quizprep: a checksum names it; the owner inside decides.
    entry = cache_dir / f"bank-{entry_name(key.owner)}.pickle"
    cached = _read_cache_entry(entry, key)
    if cached is None:
        cached = load_bank_file(path)
        replace_entry(entry, pickle.dumps((key.owner, key.content, cached), protocol=pickle.HIGHEST_PROTOCOL))
    return cached, key


@contextmanager
def _collection_paused() -> Iterator[None]:
    """Reading the banks builds tens of thousands of small objects, all kept; without the pause
    they set off cycle collections that find nothing and slow a cold load by about 15 %. Paused
    once for every file: re-enabling it after each one ran a collection per file (3 ms a start)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _read_cache_entry(entry: Path, key: FileKey) -> tuple[Bank | None, list[BankError]] | None:
    try:
        # Written only by _load_cached, from banks validated here; any damage means a miss.
        cached_owner, cached_content, loaded = pickle.loads(entry.read_bytes())  # noqa: S301
    except Exception:  # noqa: BLE001 - a missing, stale or damaged entry just means parse again
        return None
    return loaded if (cached_owner, cached_content) == key else None


def load_bank_file(path: Path) -> tuple[Bank | None, list[BankError]]:
    """One file parsed and validated afresh, bypassing the cache."""
    from quizprep.bank.validate import read_bank

    return read_bank(path)


def summarize(result: LoadResult) -> dict[str, Any]:
    by_kind: dict[str, int] = {}
    by_topic: dict[str, int] = {}
    for question in result.questions:
        by_kind[question.kind] = by_kind.get(question.kind, 0) + 1
        by_topic[question.topic] = by_topic.get(question.topic, 0) + 1
    return {
        "questions": len(result.questions),
        "by_kind": by_kind,
        "by_topic": by_topic,
        "errors": [error.to_json() for error in result.errors],
    }

