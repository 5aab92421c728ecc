"""The one place a rule of the worker's jail is decided: what it binds, which devices it opens,
what environment it gets, how many tasks it may run."""
from __future__ import annotations

import functools
import glob
import os
import re
import sys
import sysconfig
from pathlib import Path

from quizprep.grader.jail.spec import JailSpec, Mount

LEARNER_SIDE = Path(__file__).resolve().parents[1] / "learner_side"
# The distributions the worker imports (Triton for the flash-triton exercise, where installed);
# their own requirements are added, nothing else of the environment.
ROOT_PACKAGES = ("torch", "numpy", "triton")
# What libc, the interpreter and libtorch read besides Python's files: shared libraries, the
# loader's cache, time zone and locale data, the CPU topology (for its thread pool).
SYSTEM_READS = ("/usr", "/etc/ld.so.cache", "/etc/localtime", "/sys/devices/system/cpu")
SYSTEM_LINKS = (("usr/lib", "/lib"), ("usr/lib64", "/lib64"), ("usr/bin", "/bin"), ("usr/sbin", "/sbin"),
                ("usr/lib32", "/lib32"))
# Other Pythons' packages on the system (SciPy from Debian's python3-scipy, say) stay out of reach.
SYSTEM_SITE_PACKAGES = ("/usr/lib/python3*/dist-packages", "/usr/lib/python3*/site-packages",
                        "/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
                        "/usr/lib/python3/dist-packages")
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom")
GPU_DEVICE_PATTERNS = ("/dev/nvidia*", "/dev/nvidia-caps/*", "/dev/kfd", "/dev/dri/renderD*")
GPU_READS = ("/sys", "/proc/driver/nvidia")  # NVML and the CUDA runtime read the PCI tree
INHERITED_ENV = ("TRITON_INTERPRET", "CUDA_VISIBLE_DEVICES")
TASK_SLACK = 16  # the interpreter's own helper threads (faulthandler's watchdog, Triton's, the GPU driver's)


def jail_for(private_dir: str, *, private_bytes: int, threads: int, max_threads: int, gpu: bool,
             python: str = sys.executable) -> JailSpec:
    """The jail of one worker: Python, the packages it imports and quizprep's learner_side
    scripts read-only; `private_dir` an empty tmpfs of `private_bytes`, with the grader's copies
    of the learner's files read-only in its `in` folder; the GPU's device nodes only with `gpu`."""
    inbox = os.path.join(private_dir, "in")
    mounts = [Mount("ro", path, path) for path in SYSTEM_READS if os.path.exists(path)]
    mounts += [Mount("hide", path) for pattern in SYSTEM_SITE_PACKAGES for path in glob.glob(pattern)]
    mounts += [Mount("ro", path, path) for path in python_files(python)]
    mounts += [Mount("hide", path) for path in base_site_packages() if os.path.isdir(path)]
    mounts += [Mount("ro", path, path) for path in package_files()]
    mounts += [Mount("ro", str(LEARNER_SIDE), str(LEARNER_SIDE)), Mount("proc", "/proc")]
    mounts += [Mount("dev", path, path) for path in DEVICES]
    if gpu:
        mounts += [Mount("dev", path, path) for path in gpu_devices()]
        mounts += [Mount("ro", path, path) for path in GPU_READS if os.path.exists(path)]
    mounts += [Mount("tmpfs", private_dir, size=private_bytes), Mount("ro", inbox, private_dir)]
    env = tuple(worker_env(threads, private_dir).items())
    return JailSpec(tuple(mounts), env, private_dir, inbox, pids_max=threads + max_threads + TASK_SLACK, cpus=threads)


def worker_env(threads: int, private_dir: str) -> dict[str, str]:
    """The worker's whole environment, jailed or not: never the grader's (a token in it would
    reach the learner's code), but the device choices the grader made (TRITON_INTERPRET)."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1",
           "OMP_NUM_THREADS": str(threads), "TMPDIR": private_dir, "HOME": private_dir}
    return env | {name: os.environ[name] for name in INHERITED_ENV if name in os.environ}


def base_site_packages() -> tuple[str, ...]:
    """The base installation's own packages, inside its standard library's folder."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return tuple(os.path.join(prefix, "lib", version, "site-packages") for prefix in {sys.base_prefix})


def system_links() -> list[tuple[str, str]]:
    """Merged-/usr systems' top-level links (/lib -> usr/lib), made again inside the jail."""
    return [(target, link) for target, link in SYSTEM_LINKS if os.path.islink(link)]


@functools.cache
def python_files(python: str) -> tuple[str, ...]:
    """The interpreter: its executable, its virtual environment's marker, the standard library
    and libpython; the base installation's site-packages is not among them."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    paths = {os.path.realpath(python), os.path.abspath(python), sysconfig.get_path("stdlib")}
    for prefix in {sys.base_prefix, sys.base_exec_prefix}:
        paths.update(glob.glob(os.path.join(prefix, "lib", "libpython3*")))
        paths.add(os.path.join(prefix, "lib", version, "lib-dynload"))
    if sys.prefix != sys.base_prefix:
        paths.add(os.path.join(sys.prefix, "pyvenv.cfg"))
    stdlib = sysconfig.get_path("stdlib")
    found = [path for path in paths if os.path.exists(path) and not path.startswith("/usr/")]
    found.sort(key=lambda path: (path != stdlib, path))  # the standard library first: others may sit inside it
    return tuple(found)


@functools.cache
def package_files() -> tuple[str, ...]:
    """The top-level files and folders of ROOT_PACKAGES' distributions and of everything they
    require, read from their .dist-info folders (importlib.metadata takes a second here)."""
    installed = _dist_infos()
    seen: set[str] = set()
    found: set[Path] = set()
    pending = list(ROOT_PACKAGES)
    while pending:
        name = _normalise(pending.pop())
        if name in seen or name not in installed:
            continue
        seen.add(name)
        info = installed[name]
        record = _read(info / "RECORD")
        tops = {line.split(",", 1)[0].split("/", 1)[0] for line in record.splitlines()}
        found.update(info.parent / top for top in tops if top and top not in ("..", "__pycache__"))
        requirements = [line.split(":", 1)[1].strip() for line in _read(info / "METADATA").splitlines()
                        if line.startswith("Requires-Dist:")]
        pending += [match.group(0) for requirement in requirements
                    if "extra ==" not in requirement and (match := re.match(r"[A-Za-z0-9._-]+", requirement))]
    return tuple(sorted(str(path) for path in found if path.exists()))


def _dist_infos() -> dict[str, Path]:
    """Each installed distribution's .dist-info folder on sys.path, first one found winning."""
    found: dict[str, Path] = {}
    for folder in sys.path:
        for info in sorted(Path(folder or ".").glob("*.dist-info")):
            found.setdefault(_normalise(info.name.split("-", 1)[0]), info)
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def gpu_devices() -> list[str]:
    return sorted(path for pattern in GPU_DEVICE_PATTERNS for path in glob.glob(pattern))


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
