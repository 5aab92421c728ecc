"""The learner's file as the grader reads it: through descriptors that follow no symbolic link.

The grader may run as root, and a learner's folder is the learner's to change while it runs. A
check of a path ("a regular file inside its folder") and a later open of the same path may meet
two different files: swapped for a link between the two, the open would follow it to a file the
learner cannot read. So the path is made canonical once (its folder's links followed, never the
file's own), and every later open walks it from ``/`` one entry at a time with ``O_NOFOLLOW``: a
file or folder swapped for a link since is refused, not followed. Imports nothing of torch: the
command line uses it before any worker starts.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

NOT_FOLLOWED = os.O_NOFOLLOW | os.O_CLOEXEC
# A FIFO swapped in for the file would block a plain open until a writer came: opened without
# waiting, it is refused by the regular-file check instead.
FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | NOT_FOLLOWED
FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | NOT_FOLLOWED
SOURCE_BYTES = 8 << 20  # of the source the grader reads itself (a 10 MB comment is not read whole)


class SubmissionUnreadable(OSError):
    """The learner's file is not a regular file reached without following a link, or is too large."""


def canonical(path: Path) -> Path:
    """`path` made absolute with its folder's links followed once, and its own name kept as given
    (a link there is refused when opened, never followed)."""
    path = Path(path)
    return Path(os.path.realpath(path.absolute().parent)) / path.name


def target_inside(path: Path, folder: Path) -> Path | None:
    """`path` with every link followed, where that stays inside `folder` (a link between a class's
    own files, say); None where it leads out. Resolved once and checked: the caller grades the
    path returned, never `path` followed again later."""
    target = Path(path).resolve()
    return target if target.is_relative_to(Path(folder).resolve()) else None


def open_regular(path: Path) -> BinaryIO:
    """`path` (absolute, canonical) opened for reading, every entry on the way opened with
    O_NOFOLLOW; raises SubmissionUnreadable where one is a link or the file is not a regular file."""
    parts = Path(path).parts
    if not Path(path).is_absolute() or len(parts) < 2:
        raise SubmissionUnreadable(f"{path} is not an absolute path to a file")
    folder = os.open("/", FOLDER_FLAGS)
    for name in parts[1:-1]:
        folder = _step(folder, name, FOLDER_FLAGS, path)
    descriptor = _step(folder, parts[-1], FILE_FLAGS, path)
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise SubmissionUnreadable(f"{path} is not a regular file")
    os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, "rb")


def read_bytes(path: Path, limit: int) -> bytes:
    """The whole file, read once through :func:`open_regular`; refused above `limit` bytes."""
    with open_regular(path) as source:
        data = source.read(limit + 1)
    if len(data) > limit:
        raise SubmissionUnreadable(f"{path} is larger than {limit >> 20} MiB")
    return data


def source_text(path: Path | str, limit: int) -> str:
    """The file's first `limit` bytes as text, for the grader's own reading of the learner's source
    (its lines in a report, its exercise line); '' where it cannot be read without following a link."""
    try:
        with open_regular(canonical(Path(path))) as source:
            return source.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


def _step(folder: int, name: str, flags: int, path: Path) -> int:
    """`name` opened in the folder `folder` (closed here), without following a link."""
    try:
        return os.open(name, flags, dir_fd=folder)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):  # a link where a file or folder was
            raise SubmissionUnreadable(f"{path}: {name} is a symbolic link, which the grader does not follow") \
                from None
        raise
    finally:
        os.close(folder)
