"""Class mode (`quizprep grade DIR`): two classmates graded at the same time in one run cannot
reach each other — SysV shared memory, POSIX message queues, each other's private directory,
signals, prlimit — jailed (each in namespaces of its own) and in the fallback (the syscall filter
and Landlock of each worker).

The holder makes an object of every kind and holds it while its file loads; the seeker, loading
at the same time, tries each kind. Both report through the message of the exception their
function raises: the holder its time window, the seeker its window and its outcomes."""
from __future__ import annotations

import ctypes
import sys

import pytest

from quizprep.grader.cohort import Cohort, submissions
from quizprep.grader.grade import GradeOptions
from quizprep.grader.jail import launch
from quizprep.grader.worker_session import Limits

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the jail is Linux-only")

CLASS_KEY = 0x51A19
QUEUE = b"/quizprep-classmate"
MARKER = "classmate-marker"
SECONDS = 12  # the holder holds and the seeker seeks this long: long enough to overlap on a loaded machine
HOLDER = f'''
import ctypes, os, time
_libc = ctypes.CDLL(None, use_errno=True)
_start = time.time()
_libc.shmget({CLASS_KEY}, 4096, 0o1666)                              # IPC_CREAT | 0666
try:
    ctypes.CDLL("librt.so.1").mq_open({QUEUE!r}, 0o102, 0o666, None)  # O_CREAT | O_RDWR
except OSError:
    pass
with open(os.path.join(os.environ["TMPDIR"], {MARKER!r}), "w") as marker:
    marker.write("the holder's")
time.sleep({SECONDS})
_end = time.time()

def stable_softmax(x, dim=-1):
    raise RuntimeError(f"WINDOW {{_start}} {{_end}}")
'''
SEEKER = f'''
import ctypes, glob, os, resource, time
_libc = ctypes.CDLL(None, use_errno=True)
_found = dict.fromkeys(("shm", "mqueue", "private_dir", "signal", "prlimit"), "refused")
_start = time.time()

def _others():
    return [pid for pid in range(1, 32768) if pid != os.getpid()]

def _seek():
    if _libc.shmget({CLASS_KEY}, 0, 0) >= 0:
        _found["shm"] = "reached"
    try:
        if ctypes.CDLL("librt.so.1").mq_open({QUEUE!r}, 0o2) >= 0:   # O_RDWR
            _found["mqueue"] = "reached"
    except OSError:
        pass
    private_parent = os.path.dirname(os.environ["TMPDIR"].rstrip("/"))
    for path in glob.glob(os.path.join(private_parent, "*", {MARKER!r})):
        try:
            open(path).read()
            _found["private_dir"] = "reached"
        except OSError:
            pass
    limit = (ctypes.c_long * 2)()
    for pid in _others():
        if _libc.kill(pid, 0) == 0:
            _found["signal"] = "reached"
        if _libc.prlimit(pid, resource.RLIMIT_NOFILE, None, limit) == 0:
            _found["prlimit"] = "reached"

while time.time() < _start + {SECONDS}:
    _seek()
    time.sleep(0.5)
_end = time.time()

def stable_softmax(x, dim=-1):
    raise RuntimeError("WINDOW " + f"{{_start}} {{_end}} " + ",".join(f"{{k}}={{v}}" for k, v in _found.items()))
'''


def _left_behind_removed() -> None:
    libc = ctypes.CDLL(None)
    if (segment := libc.shmget(CLASS_KEY, 0, 0)) >= 0:
        libc.shmctl(segment, 0, None)  # IPC_RMID
    ctypes.CDLL("librt.so.1").mq_unlink(QUEUE)


def _window(message: str) -> list[str]:
    assert "WINDOW " in message, message
    return message.split("WINDOW ", 1)[1].split()


@pytest.mark.parametrize("jail", ["on", "off"])
def test_two_classmates_graded_at_once_cannot_reach_each_other(jail, tmp_path, monkeypatch):
    if jail == "on" and launch.refused():
        pytest.skip(f"no jail here: {launch.refused()}")
    monkeypatch.setenv(launch.OFF_SWITCH, jail)
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "a_holder.py").write_text(HOLDER)
    (folder / "b_seeker.py").write_text(SEEKER)
    options = GradeOptions(exercise="softmax", seed=0, only=("values",),
                           limits=Limits(check_seconds=SECONDS + 30, total_seconds=3 * SECONDS + 60))
    try:
        rows = Cohort(submissions(folder), options, jobs=2, root=folder, seed=0).run()
    finally:
        _left_behind_removed()
    messages = {row.file: row.report.checks[-1].message for row in rows if row.report is not None}
    holder, seeker = _window(messages["a_holder.py"]), _window(messages["b_seeker.py"])
    assert max(float(holder[0]), float(seeker[0])) < min(float(holder[1]), float(seeker[1])), \
        "the two classmates did not load at the same time: nothing was tried"
    outcomes = dict(item.split("=") for item in seeker[2].split(","))
    assert outcomes == dict.fromkeys(("shm", "mqueue", "private_dir", "signal", "prlimit"), "refused"), outcomes
