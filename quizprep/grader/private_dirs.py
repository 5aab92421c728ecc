"""The workers' private folders on the host. Each is named after the grader that made it, so that
a later grader can remove those that a killed one (SIGKILL gives no chance to clean up) left."""
from __future__ import annotations

import os
import re
import shutil
import tempfile

PREFIX = "quizprep-worker-"
_NAMED = re.compile(re.escape(PREFIX) + r"(\d+)-")
_swept = False


def make() -> str:
    """A new private folder for a worker of this grader; the first call also sweeps up."""
    global _swept
    if not _swept:
        _swept = True
        sweep(tempfile.gettempdir())
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")


def sweep(root: str) -> list[str]:
    """Remove the folders under `root` that this user's graders made and that outlived them;
    the paths removed. A folder whose grader still runs (or whose pid is taken again) stays."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        named = _NAMED.match(entry.name)
        if named and _ours(entry) and not _running(int(named.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed


def _ours(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_uid == os.getuid()
    except OSError:
        return False


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True
