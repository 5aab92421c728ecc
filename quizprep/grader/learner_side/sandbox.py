"""Kernel-enforced limits on the learner's process, and on who may look into the grader's.

The worker's own guards (patched functions, a TorchFunctionMode) live inside the learner's
process, where determined code can undo them. What the kernel enforces cannot be undone from
there, so the routes to a forged pass that go *around* the grader are closed here (Linux only;
elsewhere each step reports itself unavailable and grading goes on with the in-process guards):

* the grader makes itself non-dumpable, so no process of the same user without CAP_SYS_PTRACE
  can open its ``/proc/<pid>/mem`` or ``/proc/<pid>/fd`` (patching tolerances, writing a forged
  report into its stdout);
* the worker drops CAP_SYS_PTRACE (it runs as root in containers and CI), dies with its parent
  (``PR_SET_PDEATHSIG``) and gets a CPU-time backstop (``RLIMIT_CPU``) for the case where the
  parent vanished anyway;
* a seccomp filter, through libseccomp, makes ``execve``/``execveat`` (a fresh interpreter with no
  guards), process creation other than threads (fork fan-out around ``RLIMIT_AS``, daemonised
  grandchildren), ``ptrace``, ``process_vm_readv``/``writev``, signals to any process outside
  the worker's own group (``kill`` with a pid other than 0, ``tkill``, ``tgkill`` to another
  process) and the ``prctl`` options that would undo the above (``PR_SET_PDEATHSIG`` first) fail
  with EPERM;
* Landlock (:func:`confine`) limits what it may read and write.

This module is loaded by the worker from its file (never as ``quizprep.grader.learner_side.sandbox``) and by
the grader through the package; it imports nothing of quizprep.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import glob
import os
import resource
import signal
import stat
import sys
from dataclasses import dataclass
from typing import Any, Iterable

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
CAP_SYS_PTRACE = 19
CAP_SYS_ADMIN = 21
LINUX_CAPABILITY_VERSION_3 = 0x20080522
CLONE_THREAD = 0x00010000
PROT_EXEC = 0x4
MAP_ANONYMOUS = 0x20
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_ERRNO_EPERM = 0x00050000 | 1
SCMP_ACT_ERRNO_ENOSYS = 0x00050000 | 38
SCMP_CMP_NE, SCMP_CMP_EQ, SCMP_CMP_MASKED_EQ = 1, 4, 7
# prctl options the worker never needs after start-up: clearing its death signal (it would outlive
# a SIGKILLed grader), becoming dumpable or naming a tracer, a subreaper, securebits, its memory map.
PR_SET_SECUREBITS, PR_SET_MM, PR_SET_CHILD_SUBREAPER = 28, 35, 36
PR_SET_PTRACER = 0x59616D61
DENIED_PRCTL = (PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_SECUREBITS, PR_SET_MM, PR_SET_CHILD_SUBREAPER,
                PR_SET_PTRACER)
LOW_32_BITS = 0xFFFFFFFF
AF_NETLINK, AF_PACKET = 16, 17
DENIED_FAMILIES = (AF_NETLINK, AF_PACKET)
DENIED = ("execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev", "tkill")
F_SETPIPE_SZ, MAX_OPEN_FILES = 1031, 1024  # a pipe keeps its 64 KiB; 512 pipes at most


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """Found once: find_library runs ldconfig, and each step of the set-up needs libc."""
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name, use_errno=True) if name else None


def make_undumpable() -> bool:
    """The grader's side: same-user processes without CAP_SYS_PTRACE can no longer read or
    write its memory and file descriptors through /proc."""
    libc = _libc()
    return libc is not None and libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0


def die_with_parent(parent: int) -> bool:
    """The worker's side: SIGKILL when the grader dies, however it dies (SIGKILL included)."""
    libc = _libc()
    if not libc or libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
        return False
    if os.getppid() != parent:  # the grader was already gone before the request took effect
        os.kill(os.getpid(), signal.SIGKILL)
    return True


def limit_cpu(seconds: float) -> None:
    """A CPU-time backstop from now on: SIGXCPU ends a process whose grader could not, and SIGKILL
    a second later. The hard limit comes down too: under it, the learner's code could lift the
    soft one again (a red team's did, to unlimited)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(usage.ru_utime + usage.ru_stime + seconds) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    ceiling = soft + 1 if hard == resource.RLIM_INFINITY else min(hard, soft + 1)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, ceiling))


def limit_file_size(size: int) -> None:
    """No file written from now on grows past `size` bytes; the write fails with EFBIG (SIGXFSZ,
    which would end the process, is ignored)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    if hard != resource.RLIM_INFINITY:
        size = min(size, hard)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def limit_open_files(count: int = MAX_OPEN_FILES) -> None:
    """At most `count` descriptors, hard limit included: each can hold a pipe's buffer of kernel
    memory, which no memory limit counts (a red team's 9,997 pipes held 139 MiB)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    count = count if hard == resource.RLIM_INFINITY else min(count, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))


def drop_ptrace_capability() -> bool:
    """Without CAP_SYS_PTRACE, root is held to the same /proc rules as any user."""
    libc = _libc()
    if not libc:
        return False
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        return False
    for bit in (CAP_SYS_PTRACE, CAP_SYS_ADMIN):
        mask = ~(1 << bit) & LOW_32_BITS
        data[0].effective &= mask
        data[0].permitted &= mask
        data[0].inheritable &= mask
    return libc.capset(ctypes.byref(header), data) == 0


def install_syscall_filter(*, no_new_code: bool = False,
                           extra: Iterable[tuple[str, int, list[tuple[int, int, int, int]]]] = ()) -> str:
    """Deny new processes and programs, tracing, and signals outside the worker's group, and
    with `no_new_code` memory turning executable; `extra` rules ((syscall, action, [(argument,
    operator, datum, datum)])) on top. Returns "" when installed, else why not (the report's
    environment records it)."""
    rules = _rules(os.getpid(), no_new_code)
    rules += [(name, action, [_ArgCmp(*compare) for compare in comparisons]) for name, action, comparisons in extra]
    return load_filter(SCMP_ACT_ALLOW, rules)


def load_filter(default: int, rules: list[tuple[str, int, list[_ArgCmp]]]) -> str:
    """One seccomp filter through libseccomp: `default` for every syscall no rule names. Filters
    stack: a syscall passes only if every filter loaded lets it. Returns "" or why not."""
    lib = _libseccomp()
    if lib is None:
        return "libseccomp is not installed"
    context = lib.seccomp_init(default)
    if not context:
        return "seccomp_init failed"
    try:
        for syscall, action, comparisons in rules:
            number = lib.seccomp_syscall_resolve_name(syscall.encode())
            if number < 0:
                continue  # not on this architecture
            array = (_ArgCmp * max(len(comparisons), 1))(*comparisons)
            if lib.seccomp_rule_add_array(context, action, number, len(comparisons), array) != 0:
                return f"seccomp refused the rule for {syscall}"
        if lib.seccomp_load(context) != 0:
            return "seccomp_load failed (no_new_privs or kernel support missing)"
    finally:
        lib.seccomp_release(context)
    return ""


@functools.cache
def _libseccomp() -> ctypes.CDLL | None:
    """Found once, before any filter: find_library runs ldconfig, which a loaded filter refuses."""
    name = ctypes.util.find_library("seccomp")
    if not name:
        return None
    lib = ctypes.CDLL(name)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def _rules(pid: int, no_new_code: bool = False) -> list[tuple[str, int, list[_ArgCmp]]]:
    rules: list[tuple[str, int, list[_ArgCmp]]] = [(name, SCMP_ACT_ERRNO_EPERM, []) for name in DENIED]
    # clone for threads only; clone3 hides its flags in memory, so glibc is told it does not
    # exist and falls back to clone, which the filter can read.
    rules.append(("clone", SCMP_ACT_ERRNO_EPERM, [_ArgCmp(0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)]))
    rules.append(("clone3", SCMP_ACT_ERRNO_ENOSYS, []))
    # kill(2) only towards its own process group and prlimit(2) only on itself (pid 0): libseccomp
    # allows one comparison per argument, and the worker never needs another target (raise() goes
    # through tgkill, getrlimit and setrlimit through prlimit(0)); unjailed, it is the host's root
    rules += [(name, SCMP_ACT_ERRNO_EPERM, [_ArgCmp(0, SCMP_CMP_NE, 0, 0)]) for name in ("kill", "prlimit64")]
    rules.append(("tgkill", SCMP_ACT_ERRNO_EPERM, [_ArgCmp(0, SCMP_CMP_NE, pid, 0)]))
    rules += [("prctl", SCMP_ACT_ERRNO_EPERM, [_ArgCmp(0, SCMP_CMP_EQ, option, 0)]) for option in DENIED_PRCTL]
    rules.append(("fcntl", SCMP_ACT_ERRNO_EPERM, [_ArgCmp(1, SCMP_CMP_EQ, F_SETPIPE_SZ, 0)]))
    # A GPU's allowlist admits sockets (CUDA's are Unix ones): never one that reconfigures the
    # host's network (netlink's RTM_SETLINK) or reads its traffic, where no jail holds the worker.
    rules += [("socket", SCMP_ACT_ERRNO_EPERM, [_ArgCmp(0, SCMP_CMP_EQ, family, 0)]) for family in DENIED_FAMILIES]
    # No memory turns executable after start-up: the forbidden kernels' code is trapped
    # (native_traps.py), and this is what would put it back in place or run code the learner
    # wrote into memory. New libraries still load (mmap maps them executable, not mprotect), but
    # oneDNN's JIT cannot: the worker turns mkldnn off first (convolutions fall back to im2col).
    # Only where no GPU is present: whether a GPU driver needs it was not measured.
    # Nor is new code mapped in: anonymous memory mapped executable, or a memory file to map so
    # (a red team's probe had both granted).
    executable = [_ArgCmp(2, SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC)]
    anonymous = [*executable, _ArgCmp(3, SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, MAP_ANONYMOUS)]
    rules += [] if not no_new_code else [
        *[(name, SCMP_ACT_ERRNO_EPERM, executable) for name in ("mprotect", "pkey_mprotect")],
        ("mmap", SCMP_ACT_ERRNO_EPERM, anonymous), ("memfd_create", SCMP_ACT_ERRNO_EPERM, [])]
    return rules


# Landlock (Linux 5.13+): the learner's process reads only what it runs on and writes only below
# its private directory.
LANDLOCK_CREATE_RULESET, LANDLOCK_ADD_RULE, LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
ACCESS_FS_EXECUTE, ACCESS_FS_WRITE_FILE, ACCESS_FS_READ_FILE, ACCESS_FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
ACCESS_FS_TRUNCATE = 1 << 14
ACCESS_FS_READ = ACCESS_FS_EXECUTE | ACCESS_FS_READ_FILE | ACCESS_FS_READ_DIR
# remove dir/file, make char/dir/reg/sock/fifo/block/sym
ACCESS_FS_CHANGE_TREE = sum(1 << bit for bit in (4, 5, 6, 7, 8, 9, 10, 11, 12))
ACCESS_FS_REFER = 1 << 13
ACCESS_NET_BIND_TCP, ACCESS_NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
# What the interpreter, PyTorch and a GPU driver read after start-up: shared libraries, locale
# and time zone data, the CPU and PCI topology, randomness, the process's own /proc entry.
# /sys whole only where a GPU's driver reads its PCI topology; elsewhere the CPUs', as the jail binds.
SYSTEM_READS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/usr/share/locale",
                "/usr/share/zoneinfo", "/etc/ld.so.cache", "/etc/localtime", "/sys/devices/system/cpu", "/proc/self",
                "/proc/cpuinfo", "/proc/meminfo", "/proc/driver/nvidia", "/dev/urandom", "/dev/random", "/dev/zero")
# The character devices a GPU runtime opens for reading and writing (CUDA, NVML; ROCm).
GPU_DEVICE_PATTERNS = ("nvidia*", "nvidia-caps/*", "kfd", "dri/renderD*")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def gpu_device_nodes(dev: str = "/dev") -> list[str]:
    """The GPU's character devices under `dev` (other files of those names are not devices)."""
    found = (path for pattern in GPU_DEVICE_PATTERNS for path in glob.glob(os.path.join(dev, pattern)))
    return sorted(path for path in set(found) if _is_char_device(path))


def _is_char_device(path: str) -> bool:
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


def readable_roots(roots: Iterable[str], hidden: Iterable[str]) -> list[str]:
    """`roots` (resolved, those that exist) with every `hidden` folder carved out: Landlock only
    grants, so a root that holds a hidden folder is replaced by that folder's siblings, level by
    level. A root inside a hidden folder (a virtual environment in the checkout) stays whole."""
    secret = [os.path.realpath(path) for path in hidden]
    granted: list[str] = []
    for root in dict.fromkeys(os.path.realpath(path) for path in roots):
        if os.path.exists(root):
            granted += _around(root, [folder for folder in secret if not _within(root, folder)])
    return granted


def _around(path: str, secret: list[str]) -> list[str]:
    if any(_within(path, folder) for folder in secret):
        return []
    if not any(_within(folder, path) for folder in secret):
        return [path]
    granted = []
    for name in sorted(os.listdir(path)):
        child = os.path.realpath(os.path.join(path, name))
        if os.path.exists(child) and _within(child, path):  # a link out of the root is not granted
            granted += _around(child, secret)
    return granted


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class AccessRules:
    """What the learner's process may touch once confined: read (and map) below `reads`, read and
    write the files `devices`, and anything below `private_dir`."""

    private_dir: str
    reads: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()

    def rules(self, abi: int) -> list[tuple[str, int]]:
        everything = _handled_fs(abi)
        file_write = ACCESS_FS_WRITE_FILE | (ACCESS_FS_TRUNCATE if abi >= 3 else 0)
        rules = [(path, ACCESS_FS_READ) for path in self.reads]
        rules += [(path, ACCESS_FS_READ_FILE | ACCESS_FS_WRITE_FILE) for path in self.devices]
        return rules + [("/dev/null", ACCESS_FS_READ_FILE | file_write), (self.private_dir, everything)]

    def summary(self) -> dict[str, Any]:
        """What the report's environment says was allowed."""
        return {"reads": "your file, Python and PyTorch (read-only), system libraries, the private directory",
                "writes": "the private directory only",
                "devices": list(self.devices) or "none (no GPU device nodes found)"}


def learner_access(private_dir: str, hidden: Iterable[str], dev: str = "/dev") -> AccessRules:
    """The rules for this interpreter: its installation and libraries readable, `hidden` not."""
    import sysconfig

    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots = [os.path.join(prefix, lib) for prefix in prefixes for lib in ("lib", "lib64")]
    roots += [path for name in ("stdlib", "platstdlib", "purelib", "platlib")
              if (path := sysconfig.get_path(name))]
    roots += [path for path in sys.path if os.path.basename(path.rstrip(os.sep)) in ("site-packages", "dist-packages")]
    roots += [os.path.dirname(os.path.dirname(module.__file__)) for module in _loaded_packages()]
    gpu = tuple(gpu_device_nodes(dev))
    roots += [*SYSTEM_READS, *(["/sys"] if gpu else [])]
    return AccessRules(private_dir, tuple(readable_roots(roots, [*hidden, *_other_site_packages()])), gpu)


def _other_site_packages() -> list[str]:
    """The base Python's and the user's site-packages when this interpreter does not import from
    them (a virtual environment): a learner would find SciPy and the like there."""
    import site

    used = {os.path.realpath(path) for path in sys.path if path}
    used |= {os.path.realpath(os.path.dirname(os.path.dirname(module.__file__))) for module in _loaded_packages()}
    candidates = site.getsitepackages([sys.base_prefix, sys.base_exec_prefix]) + [site.getusersitepackages()]
    return [path for path in candidates if os.path.realpath(path) not in used]


def _loaded_packages() -> list[Any]:
    """torch and numpy as imported (a user-site or vendored install is outside the prefixes)."""
    return [sys.modules[name] for name in ("torch", "numpy") if getattr(sys.modules.get(name), "__file__", None)]


def confine(access: AccessRules) -> str:
    """From now on the process reads only what `access` grants and writes only below its private
    directory (and to /dev/null and the GPU's devices): no other learner's file, no progress
    database, none of quizprep's reference, no file in /dev/shm or /tmp that outlives the worker.
    Where the ABI allows, TCP and abstract Unix sockets and signals to processes outside the
    worker are refused too. Returns "" when in force, else why not."""
    libc = _libc()
    if not libc:
        return "libc not found"
    abi = libc.syscall(LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    if abi < 1:
        return "the kernel has no Landlock (Linux 5.13+ with landlock in the LSM list)"
    attr = _RulesetAttr(_handled_fs(abi), ACCESS_NET_BIND_TCP | ACCESS_NET_CONNECT_TCP if abi >= 4 else 0,
                        SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = libc.syscall(LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        return f"landlock_create_ruleset failed: {os.strerror(ctypes.get_errno())}"
    try:
        for path, rights in access.rules(abi):
            if not _allow(libc, ruleset, path, rights):
                return f"landlock_add_rule failed for {path}: {os.strerror(ctypes.get_errno())}"
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return "no_new_privs could not be set"
        if libc.syscall(LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            return f"landlock_restrict_self failed: {os.strerror(ctypes.get_errno())}"
    finally:
        os.close(ruleset)
    return ""


def _handled_fs(abi: int) -> int:
    """Every file right this ABI knows but ioctl on devices, which CUDA needs and Landlock would
    otherwise refuse on the device nodes."""
    rights = ACCESS_FS_READ | ACCESS_FS_WRITE_FILE | ACCESS_FS_CHANGE_TREE
    return rights | (ACCESS_FS_REFER if abi >= 2 else 0) | (ACCESS_FS_TRUNCATE if abi >= 3 else 0)


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> bool:
    """A directory gets `rights`; a file only those that Landlock allows on files."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return True  # gone since it was listed: nothing to grant
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= ACCESS_FS_EXECUTE | ACCESS_FS_READ_FILE | ACCESS_FS_WRITE_FILE | ACCESS_FS_TRUNCATE
        rule = _PathBeneathAttr(rights, fd)
        return libc.syscall(LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0) == 0
    finally:
        os.close(fd)
