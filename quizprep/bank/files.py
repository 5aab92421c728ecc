"""Where the banks and their cache live, and what an entry of the cache belongs to: a file's path
and bytes under quizprep's version, the validation rules and Python's. Kept apart from the loader
so that the quiz app can find Home's summary (`quizprep.bank.summary`) without importing the bank
model."""
from __future__ import annotations

import os
import sys
import zlib
from pathlib import Path
from typing import Iterable, NamedTuple

# Bumped whenever validation gets stricter, so that a bank cached under the old rules is checked
# again (e.g. rule 2: no infinite or NaN values, bounded formulas; rule 3: choices that point at
# another choice by its place need `shuffle: false`; rule 4: the model gained `aliases`; rule 5:
# formulas are cached without their syntax trees; rule 6: the model's value classes are NamedTuples;
# rule 7: an entry holds its file's bytes).
CACHE_RULES = 7


class FileKey(NamedTuple):
    """What a cache entry of a bank file must hold to be used: `owner` names the file under these
    rules, `content` is its bytes. Compared whole, not by a digest: hashlib loads OpenSSL, a few
    milliseconds of every start."""

    owner: str
    content: bytes


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


def owner_key(name: str) -> str:
    """What owns the cache entries of `name` (a file, the summary of some paths) under this
    quizprep, these validation rules and this Python: any of them changing means a miss."""
    from quizprep import __version__

    return f"{__version__}\0{CACHE_RULES}\0{sys.version}\0{name}"


def entry_name(owner: str) -> str:
    """The name part of `owner`'s entry: one entry per owner, replaced when its file changes."""
    return f"{zlib.crc32(owner.encode()):08x}"


def file_key(path: Path, content: bytes) -> FileKey:
    return FileKey(owner_key(str(path)), content)


def replace_entry(entry: Path, data: bytes) -> None:
    """Write `entry` whole (readers never see half of it). A read-only cache folder costs speed,
    never correctness."""
    import tempfile

    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=entry.parent, delete=False, suffix=".tmp") as handle:
            handle.write(data)
        os.replace(handle.name, entry)  # the entry of the file's earlier bytes, if any, goes with it
    except OSError:
        pass
