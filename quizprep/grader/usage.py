"""What the learner's process uses that no kernel limit of its own caps, or that code inside it
could misreport, watched from the grader.

RLIMIT_NPROC counts every process of the user (and does not bind root), and the private
directory is on a shared file system, so its threads and the bytes it stores are read here, from
``/proc`` and the directory, while the grader waits for a reply: a process over either limit is
stopped within one polling interval.
"""
from __future__ import annotations

import os
import select
import time
from typing import Any, Callable

from quizprep.grader.learner_side import protocol

POLL_SECONDS = 0.25
MAX_ENTRIES = 10_000  # files and folders in the private directory; walking more each poll is costly


def threads_of(pid: int) -> int:
    """The number of threads of process `pid` (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"Threads:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def main_thread_cpu(pid: int) -> int | None:
    """Nanoseconds of CPU that process `pid`'s first thread (the one that runs the learner's calls) has used."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat", "rb") as schedstat:
            return int(schedstat.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def process_cpu(pid: int) -> int | None:
    """Nanoseconds of CPU that every thread of process `pid` has used, exited threads included:
    its process CPU clock (clock_getcpuclockid's id, which Python does not expose), readable by
    any process that sees the pid, without a cgroup, root or the jail."""
    try:
        return time.clock_gettime_ns(((~pid) << 3) | 2)  # MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
    except OSError:
        return None


def _status_bytes(pid: int, field: bytes) -> int | None:
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def reset_peak(pid: int) -> int | None:
    """Set process `pid`'s peak resident size (VmHWM) back to its current size, which is returned;
    None where the kernel does not allow it. Read from here, the peak counts every page the
    process touches, whatever allocated it (NumPy, a C extension, a module the learner replaced)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
    except OSError:
        return None
    return _status_bytes(pid, b"VmRSS:")


def peak_growth(pid: int, baseline: int | None) -> int | None:
    """How far the resident size rose above `baseline` (from reset_peak) at its highest since."""
    peak = _status_bytes(pid, b"VmHWM:") if baseline is not None else None
    return None if peak is None or baseline is None else max(peak - baseline, 0)


class CallWatch:
    """What the grader reads from outside around one audited call of process `pid`: how far its
    resident size rose, and what ran beside the thread that makes the call (threads besides
    torch's running when it began; the CPU other threads used meanwhile, exited ones included,
    where torch computes with one thread)."""

    def __init__(self, pid: int, threads: int) -> None:
        self.pid, self.threads = pid, threads
        self.baseline = reset_peak(pid)
        self.running = threads_of(pid)
        self.outside = self._cpu_outside_the_call()

    def finish(self) -> dict[str, Any]:
        before, after = self.outside, self._cpu_outside_the_call()
        used = None if before is None or after is None or self.threads != 1 else max(after - before, 0)
        return {"resident_growth_bytes": peak_growth(self.pid, self.baseline),
                "other_threads": {"running": max(self.running - self.threads, 0), "cpu_ns": used}}

    def _cpu_outside_the_call(self) -> int | None:
        total, calling = process_cpu(self.pid), main_thread_cpu(self.pid)
        return None if total is None or calling is None else total - calling


def stored_bytes(folder: str) -> tuple[int, int]:
    """Bytes allocated on disk below `folder` and the entries counted, stopping past MAX_ENTRIES."""
    total = entries = 0
    for root, folders, files in os.walk(folder):
        entries += len(folders) + len(files)
        if entries > MAX_ENTRIES:
            break
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                continue  # removed meanwhile
    return total, entries


def over_limits(pid: int, private_dir: str | None, max_threads: int, max_bytes: int) -> str:
    """Why the process must be stopped, or "" while it is within its limits."""
    threads = threads_of(pid)
    if threads > max_threads:
        return f"started {threads} threads (at most {max_threads})"
    if private_dir is None:
        return ""
    used, entries = stored_bytes(private_dir)
    if entries > MAX_ENTRIES:
        return f"made more than {MAX_ENTRIES} files in its private directory"
    if used > max_bytes:
        return f"stored more than the {max_bytes >> 20} MiB allowed in its private directory ({used} bytes)"
    return ""


class OverLimit(Exception):
    """The learner's process went past a limit the grader watches (usage.over_limits)."""


class DeadlineReader:
    """Reads until `deadline`, checking every POLL_SECONDS that `watch()` finds nothing over its limit."""

    def __init__(self, deadline: float, watch: Callable[[], str]) -> None:
        self.deadline = deadline
        self.watch = watch

    def __call__(self, fd: int, size: int) -> bytes:
        return protocol.read_exact(fd, size, wait=self._until_readable)

    def _until_readable(self, fd: int) -> None:
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if select.select([fd], [], [], min(left, POLL_SECONDS))[0]:
                return
            problem = self.watch()
            if problem:
                raise OverLimit(problem)
