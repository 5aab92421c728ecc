"""What the learner's process may see and do, as data: built by policy.py, started by launch.py."""
from __future__ import annotations

from dataclasses import dataclass

# Every namespace Linux has but time: no network, no IPC objects, no host name, no other process,
# no mount and no user id of the host's is reachable from inside.
NAMESPACES = ("user", "pid", "net", "ipc", "uts", "cgroup", "mount")  # bwrap always makes the mount one
NOBODY = 65534


@dataclass(frozen=True)
class Mount:
    """One entry of the jail's file tree, applied in order (a later one may sit inside an earlier one).

    kind: "ro" a read-only bind of `source`; "dev" a device node bound from the host; "tmpfs" an
    empty writable tmpfs of at most `size` bytes; "hide" an empty read-only tmpfs over `target`;
    "proc" the jail's own /proc."""

    kind: str
    target: str
    source: str = ""
    size: int = 0


@dataclass(frozen=True)
class JailSpec:
    """One worker's jail. `private_dir` is its only writable place (a tmpfs of `private_bytes`),
    `inbox` the read-only folder inside it where the grader's copies of the learner's files appear."""

    mounts: tuple[Mount, ...]
    env: tuple[tuple[str, str], ...]
    private_dir: str
    inbox: str
    namespaces: tuple[str, ...] = NAMESPACES
    uid: int = NOBODY
    gid: int = NOBODY
    capabilities: tuple[str, ...] = ()  # every set empty: effective, permitted, inheritable, ambient, bounding
    no_new_privs: bool = True
    pids_max: int = 0  # 0: no cgroup of its own (threads are then bounded by RLIMIT_NPROC inside)
    cpus: int = 1  # the CPU time its cgroup allows, in CPUs (as many as the threads torch computes with)
    hostname: str = "quizprep-worker"

    @property
    def devices(self) -> tuple[str, ...]:
        return tuple(m.target for m in self.mounts if m.kind == "dev")
