"""What the learner's process may ask of the kernel once its file runs: an allowlist, and the
argument checks that keep the trapped kernels' code (native_traps.py) out of reach.

The allowlist is what CPython, PyTorch, NumPy and Triton's interpreter call: the start-up's calls
as ``strace -f -c`` counted them (grader and worker together, 65 names; the tracer's slowdown made
every traced grade time out before its checks on a loaded 2-core VM), and what file, thread, time
and memory work in Python needs besides, checked by grading every example solution and correct
variant under it (tests/grader/test_solutions_and_variants.py: a missing call fails them with
EPERM). Everything else fails with EPERM, or ENOSYS where glibc falls back to an older call it
then makes (clone3 to clone, whose flags the filter can read). CUDA_EXTRA lists what a CUDA driver is known to call
besides: it could not be measured on a machine without a GPU, and is allowed only where a GPU's
device nodes are present.

Data only, plus the arithmetic that turns an address range into seccomp comparisons; sandbox.py
loads the filters. Loaded by the worker from its file; imports nothing of quizprep.
"""
from __future__ import annotations

from typing import Iterable

SCMP_ACT_ERRNO_EPERM = 0x00050000 | 1
SCMP_ACT_ERRNO_ENOSYS = 0x00050000 | 38
SCMP_CMP_MASKED_EQ = 7
MAP_FIXED = 0x10
MREMAP_FIXED = 0x2
ADDRESS_BITS = 0xFFFFFFFFFFFFFFFF

ALLOWED = (
    # files, descriptors and the file system
    "read", "write", "readv", "writev", "pread64", "pwrite64", "open", "openat", "close", "close_range",
    "lseek", "stat", "fstat", "lstat", "newfstatat", "statx", "access", "faccessat", "faccessat2", "readlink",
    "readlinkat", "getdents64", "getcwd", "fcntl", "dup", "dup2", "dup3", "pipe", "pipe2", "ioctl", "statfs",
    "fstatfs", "mkdir", "mkdirat", "unlink", "unlinkat", "rename", "renameat", "renameat2", "rmdir", "ftruncate",
    "fsync", "fdatasync", "fadvise64", "flock", "umask", "chdir", "fchdir", "utimensat", "chmod", "fchmod",
    "memfd_create", "sendfile", "copy_file_range",
    # memory
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "mlock", "munlock", "membarrier",
    "get_mempolicy", "set_mempolicy", "mbind",
    # threads, waiting and time
    "clone", "clone3", "futex", "set_robust_list", "get_robust_list", "rseq", "set_tid_address", "gettid",
    "sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam", "sched_getscheduler",
    "sched_get_priority_max", "sched_get_priority_min", "nanosleep", "clock_nanosleep", "clock_gettime",
    "clock_getres", "gettimeofday", "time", "poll", "ppoll", "select", "pselect6", "epoll_create1", "epoll_ctl",
    "epoll_wait", "epoll_pwait", "eventfd2",
    # signals (kill and tgkill are limited to the worker itself by sandbox.py's filter)
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait", "sigaltstack", "kill", "tgkill",
    "exit", "exit_group", "wait4", "restart_syscall",
    # identity and limits, read only
    "getpid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getgroups", "getresuid", "getresgid",
    "getpgrp", "getpgid", "getsid", "uname", "sysinfo", "getrlimit", "prlimit64", "getrusage", "times",
    "getrandom", "getcpu", "capget", "prctl", "arch_prctl",
    # the worker's own set-up, before the allowlist: Landlock and seccomp themselves
    "seccomp", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
)
# Known from what CUDA's user-space driver and NVML call; not measured (no GPU here).
CUDA_EXTRA = (
    "socket", "connect", "sendmsg", "recvmsg", "getsockopt", "setsockopt", "shutdown", "socketpair",
    "inotify_init1", "inotify_add_watch", "inotify_rm_watch", "timerfd_create", "timerfd_settime",
    "shmget", "shmat", "shmdt", "shmctl", "mlock2", "munlockall", "msync",
)
# Newer calls glibc tries first and replaces by an older one on ENOSYS (clone3 by clone).
FALL_BACK = ("clone3",)

Rule = tuple[str, int, list[tuple[int, int, int, int]]]
ALLOW = 0x7FFF0000


def allowlist(gpu: bool) -> tuple[list[Rule], int]:
    """The allowlist filter's rules and its default action (EPERM for everything not listed)."""
    names = [*ALLOWED, *(CUDA_EXTRA if gpu else ())]
    rules: list[Rule] = [(name, SCMP_ACT_ERRNO_ENOSYS, []) for name in FALL_BACK]
    rules += [(name, ALLOW, []) for name in dict.fromkeys(names) if name not in FALL_BACK]
    return rules, SCMP_ACT_ERRNO_EPERM


def protect_ranges(spans: Iterable[tuple[int, int]]) -> list[Rule]:
    """Refuse unmapping, moving, remapping over, discarding or reprotecting any page of `spans`
    ([start, end) addresses): what would bring a trapped library's original code back. A seccomp
    filter compares each argument with constants, and libseccomp allows one comparison per
    argument in a rule, so a range becomes aligned power-of-two blocks, each matched by one masked
    comparison. A call whose range starts below a span and reaches into it is not seen (the
    kernel adds address and length; a filter cannot)."""
    rules: list[Rule] = []
    for start, end in spans:
        for value, mask in aligned_blocks(start, end):
            address = [(0, SCMP_CMP_MASKED_EQ, mask, value)]
            rules += [(name, SCMP_ACT_ERRNO_EPERM, address)
                      for name in ("munmap", "mremap", "madvise", "mprotect", "pkey_mprotect")]
            rules.append(("mmap", SCMP_ACT_ERRNO_EPERM, [*address, (3, SCMP_CMP_MASKED_EQ, MAP_FIXED, MAP_FIXED)]))
            rules.append(("mremap", SCMP_ACT_ERRNO_EPERM, [(3, SCMP_CMP_MASKED_EQ, MREMAP_FIXED, MREMAP_FIXED),
                                                          (4, SCMP_CMP_MASKED_EQ, mask, value)]))
    return rules


def aligned_blocks(start: int, end: int) -> list[tuple[int, int]]:
    """[start, end) as the fewest blocks of 2**k bytes aligned on 2**k: (first address, mask), so
    that ``address & mask == first`` holds exactly for the addresses of the block."""
    blocks = []
    while start < end:
        size = start & -start if start else 1 << 63
        while size > end - start:
            size >>= 1
        blocks.append((start, ~(size - 1) & ADDRESS_BITS))
        start += size
    return blocks
