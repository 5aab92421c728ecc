"""The worker's own cgroups, where this process may make them (root, usually): at most
`pids.max` tasks, and at most `cpus` CPUs' time. Each worker in a cgroup of its own also gets
an equal share of a busy machine whatever its thread count, so a classmate that burns every
thread it may start slows the files graded beside it by its share, not a hundredfold (the time
limits are wall clock). cgroup v1 keeps each controller in a hierarchy of its own; v2 has one
tree, where a controller works only if the root hands it down (`cgroup.subtree_control`)."""
from __future__ import annotations

import glob
import os
import time
import uuid

ROOTS = {"pids": ("/sys/fs/cgroup/pids", "/sys/fs/cgroup"), "cpu": ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup")}
PERIOD_US = 100_000


def worker_cgroups(pids_max: int, cpus: int) -> dict[str, str]:
    """Controller -> the cgroup made for it (one path serves both on v2); a controller this
    process may not use is left out (its limit then holds inside the jail, or not at all)."""
    made: dict[str, str] = {}
    for controller, roots in ROOTS.items():
        for root in roots:
            if not os.access(os.path.join(root, "cgroup.procs"), os.W_OK):
                continue
            # v2: one tree, one cgroup for both controllers
            shared = next((p for p in made.values() if os.path.samefile(os.path.dirname(p), root)), None)
            path = shared or _new(root)
            if path is None:
                continue
            if _limit(path, controller, pids_max, cpus):
                made[controller] = path
                break
            if shared is None:
                remove(path)
    return made


def _new(root: str) -> str | None:
    _remove_stale(root)
    path = os.path.join(root, f"quizprep-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        os.mkdir(path)
    except OSError:
        return None
    return path


def _limit(path: str, controller: str, pids_max: int, cpus: int) -> bool:
    if controller == "pids":
        writes = [("pids.max", str(pids_max))]
    elif os.path.exists(os.path.join(path, "cpu.max")):
        writes = [("cpu.max", f"{cpus * PERIOD_US} {PERIOD_US}")]
    else:
        writes = [("cpu.cfs_period_us", str(PERIOD_US)), ("cpu.cfs_quota_us", str(cpus * PERIOD_US))]
    try:
        for name, value in writes:
            with open(os.path.join(path, name), "w") as file:
                file.write(value)
    except OSError:
        return False
    return True


def enter_then(cgroups: dict[str, str], line: list[str]) -> list[str]:
    """`line` started from inside `cgroups`: a shell moves itself into each first, so no task of
    the jail is ever outside them."""
    paths = sorted(set(cgroups.values()))
    if not paths:
        return line
    enter = 'for g in $0; do echo $$ > "$g/cgroup.procs" || exit 125; done; exec "$@"'
    return ["/bin/sh", "-c", enter, " ".join(paths), *line]


def remove_all(cgroups: dict[str, str]) -> None:
    for path in set(cgroups.values()):
        remove(path)


def remove(path: str, wait: float = 2.0) -> None:
    """Removed once its last task is gone: the jail's processes die just after bubblewrap's outer one."""
    deadline = time.monotonic() + wait
    while True:
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() >= deadline:
                return  # a grader killed with its jails leaves it to the next one (_remove_stale)
            time.sleep(0.02)


def _remove_stale(root: str) -> None:
    """The empty cgroups of graders that are gone (SIGKILLed before they could remove them)."""
    for path in glob.glob(os.path.join(root, "quizprep-*-*")):
        owner = os.path.basename(path).split("-")[1]
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            remove(path, wait=0)
