"""Load question banks: find the files, read each through the validated-bank cache or validate it
afresh (`quizprep.bank.validate`), and check what spans files (duplicate ids, chains)."""
from __future__ import annotations

import gc
import os
import pickle
import sys
import tempfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from quizprep.bank.model import Bank, BankError, Question, Source

# Bumped whenever validation gets stricter, so that a bank cached under the old rules is checked
# again (e.g. rule 2: no infinite or NaN values, bounded formulas; rule 3: choices that point at
# another choice by its place need `shuffle: false`; rule 4: the model gained `aliases`; rule 5:
# formulas are cached without their syntax trees; rule 6: the model's value classes are NamedTuples;
# rule 7: an entry holds its file's bytes).
CACHE_RULES = 7


@dataclass
class LoadResult:
    banks: list[Bank] = field(default_factory=list)
    errors: list[BankError] = field(default_factory=list)
    # The id of a question merged away → the id of the question that took it over.
    aliases: dict[str, str] = field(default_factory=dict)

    @property
    def questions(self) -> list[Question]:
        return [q for bank in self.banks for q in bank.questions]

    def merged(self) -> dict[str, tuple[str, str]]:
        """Each merged-away id → (the id that took it over, that question's topic)."""
        topics = {q.id: q.topic for q in self.questions}
        return {old: (kept, topics[kept]) for old, kept in self.aliases.items() if kept in topics}


def default_bank_dir() -> Path:
    """The shipped banks: `questions/` of a source checkout, else the copy inside the wheel."""
    package = Path(__file__).resolve().parents[1]
    checkout = package.parent / "questions"
    return checkout if checkout.is_dir() else package / "questions"


def bank_files(paths: Iterable[Path | str] | None = None) -> list[Path]:
    files: list[Path] = []
    for path in map(Path, paths or [default_bank_dir()]):
        files.extend(sorted(path.glob("*.yaml")) + sorted(path.glob("*.yml")) if path.is_dir() else [path])
    return files


def default_cache_dir() -> Path:
    """Where validated banks are cached: `$QUIZPREP_CACHE_DIR`, else the user cache folder."""
    configured = os.environ.get("QUIZPREP_CACHE_DIR")
    if configured:
        return Path(configured)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("quizprep", appauthor=False))


def load_banks(paths: Iterable[Path | str] | None = None, cache_dir: Path | None = None) -> LoadResult:
    """Load and validate banks. With `cache_dir`, a file whose bytes were validated before is
    read back from the cache instead of being parsed and checked again (the quiz app's start-up)."""
    result = LoadResult()
    first_seen: dict[str, Source] = {}
    declared: set[str] = set()
    with _collection_paused():
        loaded = [_load_cached(path, cache_dir) if cache_dir else load_bank_file(path) for path in bank_files(paths)]
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


def _load_cached(path: Path, cache_dir: Path) -> tuple[Bank | None, list[BankError]]:
    """The file's validated bank from its cache entry when the entry holds the very same bytes,
    else validated afresh and cached. Entries are compared byte for byte rather than found by a
    digest of the file: hashlib loads OpenSSL, a few milliseconds of every start."""
    from quizprep import __version__

    try:
        content = path.read_bytes()
    except OSError:
        return load_bank_file(path)
    owner = f"{__version__}\0{CACHE_RULES}\0{sys.version}\0{path}"
    # One entry per file and version of quizprep: a checksum names it; the owner inside decides.
    entry = cache_dir / f"bank-{zlib.crc32(owner.encode()):08x}.pickle"
    cached = _read_cache_entry(entry, owner, content)
    if cached is not None:
        return cached
    loaded = load_bank_file(path)
    _write_cache_entry(entry, (owner, content, loaded))
    return loaded


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


def _read_cache_entry(entry: Path, owner: str, content: bytes) -> tuple[Bank | None, list[BankError]] | None:
    try:
        # Written only by _write_cache_entry, from banks validated here; any damage means a miss.
        cached_owner, cached_content, loaded = pickle.loads(entry.read_bytes())  # noqa: S301
    except Exception:  # noqa: BLE001 - a missing, stale or damaged entry just means parse again
        return None
    return loaded if (cached_owner, cached_content) == (owner, content) else None


def _write_cache_entry(entry: Path, cached: tuple[str, bytes, tuple[Bank | None, list[BankError]]]) -> None:
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=entry.parent, delete=False, suffix=".tmp") as handle:
            handle.write(pickle.dumps(cached, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(handle.name, entry)  # the file's earlier version, if cached, goes with it
    except OSError:
        pass  # a read-only cache folder costs speed, never correctness


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

