"""The worker's syscalls: an allowlist (learner_side/syscall_policy.py), and no page of a trapped
library unmapped, moved or remapped over.

Both forged or leaked on main (issue 30): the trapped pages unmapped and the libtorch mapping
before them grown over them with mremap brought the original kernel back from the page cache (no
mprotect, no bytes brought; SDPA then passed); and the denylist let through every syscall it did
not name (sockets of every family, the kernel log, the clock's state, SysV shared memory).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from test_native_routes import HEAD, SHIM

from quizprep.grader.grade import GradeOptions, grade
from quizprep.grader.learner_side import syscall_policy
from quizprep.grader.learner_side.sandbox import gpu_device_nodes

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")

REMAP = '''
_RESTORED = []


def _restore():
    """Each run of anonymous pages holding traps unmapped, and the libtorch file mapping just
    before it grown in place over the hole: the kernel fills it from the file, traps gone."""
    ctypes = _ctypes()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int]
    libc.mremap.restype = ctypes.c_void_p
    with open("/proc/self/maps") as maps:
        rows = [line.split() for line in maps]
    for previous, row in zip(rows, rows[1:]):
        (before, joint), (start, end) = ([int(x, 16) for x in r[0].split("-")] for r in (previous, row))
        if len(row) == 5 and row[1] == "r-xp" and previous[-1].endswith("libtorch_cpu.so") and joint == start:
            if libc.munmap(start, end - start) != 0:
                raise PermissionError("munmap: " + os.strerror(ctypes.get_errno()))
            if libc.mremap(before, start - before, end - before, 0) != before:
                raise PermissionError("mremap: " + os.strerror(ctypes.get_errno()))
    _RESTORED.append(True)


def _forbidden_out(q, k, v, mask):
    if not _RESTORED:
        _restore()
    return _shim(q, k, v, mask)
'''
CALLS = '''# quizprep: exercise=softmax
import ctypes, os, socket

libc = ctypes.CDLL(None, use_errno=True)


def _shm():
    segment = libc.shmget(0, 4096, 0o600)
    if segment >= 0:
        libc.shmctl(segment, 0, None)  # IPC_RMID: leave nothing behind
    return segment


def _socket(family, kind):
    socket.socket(family, kind).close()
    return 0


CALLS = {
    "socket(AF_INET)": lambda: _socket(socket.AF_INET, socket.SOCK_DGRAM),
    "socket(AF_UNIX)": lambda: _socket(socket.AF_UNIX, socket.SOCK_STREAM),
    "socket(AF_NETLINK)": lambda: _socket(socket.AF_NETLINK, socket.SOCK_RAW),
    "klogctl": lambda: libc.klogctl(10, None, 0),  # SYSLOG_ACTION_SIZE_BUFFER: reads only
    "adjtimex": lambda: libc.adjtimex(ctypes.create_string_buffer(256)),  # modes 0: reads only
    "shmget": _shm,
}
accepted = []
for name, call in CALLS.items():
    try:
        if call() >= 0:
            accepted.append(name)
    except OSError:
        pass
raise RuntimeError(f"accepted: {accepted}")
'''


PIPES = """# quizprep: exercise=softmax
import fcntl, os


def stable_softmax(x, dim=-1):
    read, write = os.pipe()
    try:
        fcntl.fcntl(write, 1031, 1 << 20)  # F_SETPIPE_SZ: a 1 MiB buffer of kernel memory
        resized = "resized"
    except OSError as error:
        resized = error.strerror
    pipes = []
    try:
        while len(pipes) < 5000:
            pipes.append(os.pipe())
    except OSError as error:
        stopped = error.strerror
    raise RuntimeError(f"F_SETPIPE_SZ: {resized}; {len(pipes)} more pipes, then {stopped}")
"""


def _first_failure(path: Path, check: str) -> str:
    report = grade(path, GradeOptions(only=(check,)))
    assert not report.passed, "forged pass"
    failed = next(c for c in report.checks if c.status == "fail")
    return " ".join([failed.message, *failed.traceback])


def test_the_trapped_pages_cannot_be_remapped_from_the_library_file(tmp_path: Path) -> None:
    path = tmp_path / "attention.py"
    path.write_text(HEAD + SHIM.replace("def _forbidden_out(", "def _shim(") + REMAP)
    message = _first_failure(path, "values")
    assert "munmap: Operation not permitted" in message, message


def test_syscalls_outside_the_allowlist_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "softmax.py"
    path.write_text(CALLS)
    message = _first_failure(path, "values")
    # A CUDA driver talks over sockets (syscall_policy.CUDA_EXTRA), so a GPU machine allows them.
    sockets = ["socket(AF_INET)", "socket(AF_UNIX)", "socket(AF_NETLINK)"] if gpu_device_nodes() else []
    assert f"accepted: {sockets}" in message, message


@pytest.mark.parametrize("start, end", [(0x7F0000001000, 0x7F0000A43000), (0x1000, 0x2000), (0x10000, 0x13000)])
def test_a_range_becomes_masked_blocks_covering_it_exactly(start: int, end: int) -> None:
    blocks = syscall_policy.aligned_blocks(start, end)
    covered = sum((~mask & syscall_policy.ADDRESS_BITS) + 1 for _, mask in blocks)
    assert covered == end - start
    for address in (start, end - 1, (start + end) // 2 // 4096 * 4096):
        assert sum(address & mask == value for value, mask in blocks) == 1
    for address in (start - 1, end):
        assert not any(address & mask == value for value, mask in blocks)


def test_pipes_are_few_and_keep_their_size(tmp_path: Path) -> None:
    """A pipe's buffer is kernel memory that neither RLIMIT_AS nor the resident size counts: the fourth
    red team held 139 MiB in 9,997 pipes enlarged to 1 MiB each."""
    path = tmp_path / "softmax.py"
    path.write_text(PIPES)
    message = _first_failure(path, "values")
    assert "F_SETPIPE_SZ: Operation not permitted;" in message and "Too many open files" in message, message
    pipes = int(message.split(" more pipes")[0].rsplit(" ", 1)[1])
    assert pipes < 512, message
