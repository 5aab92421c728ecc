"""What the worker's jail was, as applied: `grade --json` shows it under environment.sandbox.jail."""
from __future__ import annotations

from typing import Any

from quizprep.grader.jail.spec import JailSpec


def applied(spec: JailSpec | None, refused: str, cgroups: dict[str, str]) -> dict[str, Any]:
    """Jailed: what the worker may see and do; refused: why not, and which layers hold instead."""
    if spec is None:
        return {"namespaces": "none: " + refused,
                "fallback": "the in-process layers only (Landlock, the syscall filter, rlimits, polling)"}
    return {
        "namespaces": list(spec.namespaces),
        "network": "none (its own empty network namespace)",
        "user": f"uid {spec.uid}, gid {spec.gid} inside its user namespace",
        "capabilities": "none (all five sets empty), no_new_privs",
        "environment": sorted(name for name, _ in spec.env),
        "devices": list(spec.devices),
        "private_dir": f"tmpfs of {_mib(next(m.size for m in spec.mounts if m.kind == 'tmpfs'))}",
        "tasks": (f"at most {spec.pids_max} (cgroup pids.max)" if "pids" in cgroups else
                  f"at most {spec.pids_max} (RLIMIT_NPROC in its user namespace)"),
        "cpu": (f"at most {spec.cpus} {_cpus_time(spec.cpus)}, and an equal share of a busy machine (its own cgroup)"
                if "cpu" in cgroups else "no cgroup of its own: a busy classmate can slow it"),
    }


def _cpus_time(cpus: int) -> str:
    return "CPUs' time" if cpus > 1 else "CPU's time"


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"


def fallback_note(refused: str) -> str:
    """The line under a class table where the workers ran without a jail ("" where jailed)."""
    return f"No jail ({refused}): each file ran with the in-process layers only" if refused else ""
