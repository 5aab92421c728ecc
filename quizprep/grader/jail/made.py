"""One worker's jail as made by the grader: its spec (None in the fallback), why not, its cgroups."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from quizprep.grader.jail import applied, cgroups, launch, policy
from quizprep.grader.jail.spec import JailSpec


@dataclass
class WorkerJail:
    spec: JailSpec | None
    refused: str
    cgroups: dict[str, str] = field(default_factory=dict)  # controller -> path (grader/jail/cgroups.py)
    _worker: int | None = None

    @classmethod
    def make(cls, private_dir: str, *, private_bytes: int, threads: int, max_threads: int, gpu: bool,
             python: str, forked: bool) -> WorkerJail:
        """The worker's own namespaces, where the kernel allows them (a forked worker shares its
        server's: class mode jails its workers one by one instead)."""
        refused = "a fork server's child" if forked else launch.refused()
        if refused:
            return cls(None, refused)
        spec = policy.jail_for(private_dir, private_bytes=private_bytes, threads=threads, max_threads=max_threads,
                               gpu=gpu, python=python)
        return cls(spec, "", cgroups.worker_cgroups(spec.pids_max, spec.cpus))

    def worker_config(self, grader: int) -> dict[str, Any]:
        """What the worker is told about its jail: whose death it dies with (jailed: bubblewrap's
        pid 1, which dies with the grader), and its task limit where no cgroup holds one."""
        if self.spec is None:
            return {"parent": grader, "max_tasks": 0}
        return {"parent": 1, "max_tasks": 0 if "pids" in self.cgroups else self.spec.pids_max}

    def inside(self, copy: str) -> str:
        """Where the worker sees the grader's copy `copy` (in its private directory)."""
        return os.path.join(self.spec.inbox, os.path.basename(copy)) if self.spec else copy

    def command(self, argv: list[str]) -> list[str]:
        return argv if self.spec is None else cgroups.enter_then(self.cgroups, launch.command_line(self.spec, argv))

    def private_dir_seen_from_outside(self, worker: int, private_dir: str) -> str:
        """Where the grader counts what the worker stored: jailed, its private directory is a tmpfs
        in its own mount namespace, reached through its /proc entry's root."""
        return private_dir if self.spec is None else f"/proc/{worker}/root{private_dir}"

    def worker_pid(self, outer: int) -> int:
        """The worker's pid, given the pid of the process the grader started (`outer`)."""
        if self.spec is None:
            return outer
        if self._worker is not None:
            return self._worker
        # Kept once bubblewrap's pid 1 has forked it: a watch polling during start-up met pid 1 alone,
        # kept it, and every later measure (threads, memory, CPU) read the wrong process under load.
        found, there = launch.innermost(outer)
        if there:
            self._worker = found
        return found

    def exit_status(self, status: int | None) -> int | None:
        """The worker's status as Popen reports it (negative: a signal), through bubblewrap's."""
        if self.spec is not None and status is not None and status > launch.BWRAP_SIGNALLED:
            return launch.BWRAP_SIGNALLED - status
        return status

    def summary(self) -> dict[str, Any]:
        return applied.applied(self.spec, self.refused, self.cgroups)

    def remove(self) -> None:
        cgroups.remove_all(self.cgroups)
        self.cgroups = {}
