"""The worker's jail (quizprep/grader/jail/): each route out of it, tried by a hostile submission.

One submission tries every route at once and reports, per route, "refused" or what it reached;
each test reads one route's outcome. On main before the jail each of these was "reached". Routes
that only namespaces close run where the kernel allows them; the grader's environment stays out
in the fallback too (QUIZPREP_JAIL=off).
"""
from __future__ import annotations

import ctypes
import json
import os
import socket
import sys
import threading
from pathlib import Path

import pytest

from quizprep.grader.grade import GradeOptions, grade
from quizprep.grader.jail import launch, policy
from quizprep.grader.worker_session import Limits

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the jail is Linux-only")
jailed = pytest.mark.skipif(bool(launch.refused()), reason=f"no jail here: {launch.refused()}")
SECRET = "QUIZPREP_TEST_SECRET"
SHM_KEY = 0x51A17
KEY_NAME = b"quizprep-jail-probe"
QUEUE_NAME = b"/quizprep-jail-probe"
PROBE = r'''
import ctypes, os, socket, stat, struct, torch
libc = ctypes.CDLL(None, use_errno=True)

def attempt(action):
    try:
        return action() or "refused"
    except OSError as error:
        return "refused"

def kmsg():
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "kmsg")
    os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 11))
    with open(path, "rb", buffering=0) as log:
        return "reached" if log.read(256) else ""

def klogctl():
    buffer = ctypes.create_string_buffer(256)
    return "reached" if libc.klogctl(3, buffer, 256) >= 0 else ""   # SYSLOG_ACTION_READ_ALL

def packet():
    socket.socket(socket.AF_PACKET, socket.SOCK_RAW).close()
    return "reached"

def host_sockets():
    with open("/proc/self/net/tcp") as table:
        return "reached" if "{tcp_hex}" in table.read() else ""

def tcp():
    socket.create_connection(("127.0.0.1", {tcp_port}), timeout=2).sendall(b"escaped")
    return "reached"

def udp():
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"escaped", ("127.0.0.1", {udp_port}))
    return ""   # the test says whether the datagram arrived

def unix():
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect({unix_path!r})
    client.sendall(b"escaped")
    return "reached"

def failed_with(result, permitted_errno):
    # a call that changes nothing either way: refused (EPERM) before it is read, or read and rejected
    return "reached" if result < 0 and ctypes.get_errno() == permitted_errno else ""

def reboot():
    return failed_with(libc.syscall(169, 0, 0, 0, 0), 22)   # bad magic: EINVAL once permitted

def adjtimex():
    timex = (ctypes.c_long * 64)()
    timex[0] = 0x4000            # modes = ADJ_TICK
    timex[13] = 1                # tick far below its minimum: EINVAL once permitted
    return failed_with(libc.adjtimex(timex), 22)

def setlink():
    # RTM_SETLINK on the loopback (index 1) changing no flag: acknowledged with 0 only where the
    # caller may reconfigure that network's links (CAP_NET_ADMIN over it)
    link = struct.pack("BxHiII", 0, 0, 1, 0, 0)                          # ifinfomsg, ifi_change 0
    header = struct.pack("IHHII", 16 + len(link), 19, 0x1 | 0x4, 1, 0)   # RTM_SETLINK, REQUEST | ACK
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) as route:  # NETLINK_ROUTE
        route.send(header + link)
        return "reached" if struct.unpack_from("i", route.recv(4096), 16)[0] == 0 else ""

def shm():   # made in its own IPC namespace, it must not outlive the grade (the test looks for it after)
    return "reached" if libc.shmget({shm_key}, 1 << 20, 0o1600) >= 0 else ""   # IPC_CREAT | 0600

def keyring():   # in the user keyring; the test looks for it after the grade
    return "reached" if libc.syscall(248, b"user", {key_name!r}, b"x", 1, -4) >= 0 else ""   # add_key

def mqueue():
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    return "reached" if rt.mq_open({queue_name!r}, 0o102, 0o600, None) >= 0 else ""   # O_CREAT | O_RDWR

def grader_limits():
    import resource
    soft, hard = resource.prlimit({grader}, resource.RLIMIT_NOFILE)
    resource.prlimit({grader}, resource.RLIMIT_NOFILE, (soft, hard))   # the same values: nothing changes
    return "reached"

def grader_priority():
    os.setpriority(os.PRIO_PROCESS, {grader}, os.getpriority(os.PRIO_PROCESS, {grader}))
    return "reached"

def secret():
    return "reached" if os.environ.get({secret!r}) else ""

ROUTES = dict(kmsg=kmsg, klogctl=klogctl, packet=packet, host_sockets=host_sockets, tcp=tcp, udp=udp,
              unix=unix, reboot=reboot, adjtimex=adjtimex, setlink=setlink, shm=shm, keyring=keyring, mqueue=mqueue,
              grader_limits=grader_limits,
              grader_priority=grader_priority, secret=secret)

def scaled_dot_product_attention(q, k, v, mask=None):
    outcomes = {{name: attempt(route) for name, route in ROUTES.items()}}
    raise RuntimeError("OUTCOMES" + ",".join(f"{{name}}={{outcome}}" for name, outcome in outcomes.items()))
'''


class Listeners:
    """A TCP, a UDP and a pathname UNIX listener on this machine, recording what reaches them."""

    def __init__(self, folder: Path) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix_path = str(folder / "listener.sock")
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        os.chmod(self.unix_path, 0o777)
        self.unix.listen()
        self.received: set[str] = set()
        for name, sock in (("tcp", self.tcp), ("unix", self.unix)):
            threading.Thread(target=self._accept, args=(name, sock), daemon=True).start()
        threading.Thread(target=self._datagrams, daemon=True).start()

    def _accept(self, name: str, sock: socket.socket) -> None:
        try:
            connection, _ = sock.accept()
            if connection.recv(16):
                self.received.add(name)
        except OSError:
            pass

    def _datagrams(self) -> None:
        try:
            if self.udp.recv(16):
                self.received.add("udp")
        except OSError:
            pass

    def close(self) -> None:
        for sock in (self.tcp, self.udp, self.unix):
            sock.close()


def _left_behind() -> dict[str, str]:
    """Which of the IPC objects and keys the probe made outlived its grade; each is removed."""
    libc = ctypes.CDLL(None)
    rt = ctypes.CDLL("librt.so.1")
    segment = libc.shmget(SHM_KEY, 0, 0)
    key = libc.syscall(250, 10, -4, b"user", KEY_NAME, 0)  # keyctl(KEYCTL_SEARCH, the user keyring)
    queue = rt.mq_open(QUEUE_NAME, 2)
    if segment >= 0:
        libc.shmctl(segment, 0, None)  # IPC_RMID
    if key >= 0:
        libc.syscall(250, 9, key, -4)  # KEYCTL_UNLINK
    if queue >= 0:
        rt.mq_close(queue)
        rt.mq_unlink(QUEUE_NAME)
    return {f"{name}_outlives": "reached" if found >= 0 else "refused"
            for name, found in (("shm", segment), ("keyring", key), ("mqueue", queue))}


def _probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    listeners = Listeners(tmp_path)
    outcomes: dict[str, str] = {}
    port = listeners.tcp.getsockname()[1]
    source = PROBE.format(tcp_port=port, tcp_hex=f"0100007F:{port:04X}", udp_port=listeners.udp.getsockname()[1],
                          unix_path=listeners.unix_path, shm_key=SHM_KEY, grader=os.getpid(), secret=SECRET,
                          key_name=KEY_NAME, queue_name=QUEUE_NAME)
    path = tmp_path / "attention.py"
    path.write_text(source)
    monkeypatch.setenv(SECRET, "instructor-token")
    os.chmod(tmp_path, 0o755)
    try:
        report = grade(path, GradeOptions(only=("values",), limits=Limits(check_seconds=30)))
        threading.Event().wait(0.3)  # a datagram in flight
        message = report.checks[-1].message
        assert "OUTCOMES" in message, message
        outcomes.update(item.split("=", 1) for item in message.split("OUTCOMES", 1)[1].split(",")[:len(ROUTES)])
        outcomes.update(dict.fromkeys(listeners.received, "reached"))
        outcomes["sandbox"] = json.dumps(report.environment["sandbox"].get("jail", {}))
    finally:
        listeners.close()
        outcomes.update(_left_behind())
    return outcomes


ROUTES = ("kmsg", "klogctl", "packet", "host_sockets", "tcp", "udp", "unix", "reboot", "adjtimex", "setlink", "shm",
          "keyring", "mqueue", "grader_limits", "grader_priority", "secret")
MADE_INSIDE = ("shm", "keyring", "mqueue")  # allowed in its own namespaces: what matters is that they go with it


@pytest.fixture(scope="module")
def jailed_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.delenv(launch.OFF_SWITCH, raising=False)
        return _probe(tmp_path_factory.mktemp("jailed"), monkeypatch)


@pytest.fixture(scope="module")
def fallback_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv(launch.OFF_SWITCH, "off")
        return _probe(tmp_path_factory.mktemp("fallback"), monkeypatch)


@jailed
@pytest.mark.parametrize("route", [*(route for route in ROUTES if route not in MADE_INSIDE),
                                   *(f"{route}_outlives" for route in MADE_INSIDE)])
def test_no_route_out_of_the_jail(route, jailed_outcomes):
    assert jailed_outcomes[route] == "refused", (route, jailed_outcomes)


@jailed
def test_the_jail_is_reported(jailed_outcomes):
    jail = json.loads(jailed_outcomes["sandbox"])
    assert jail["namespaces"] == ["user", "pid", "net", "ipc", "uts", "cgroup", "mount"]
    assert jail["capabilities"].startswith("none") and jail["user"].startswith("uid 65534")
    assert SECRET not in jail["environment"]


def test_the_fallback_says_so_and_keeps_the_graders_environment_out(fallback_outcomes):
    assert json.loads(fallback_outcomes["sandbox"])["namespaces"] == "none: turned off (QUIZPREP_JAIL=off)"
    assert fallback_outcomes["secret"] == "refused"


@pytest.mark.parametrize("route", ("reboot", "adjtimex", "setlink", "packet", "klogctl", "grader_limits",
                                   "grader_priority"))
def test_without_the_jail_the_calls_that_change_the_host_are_refused_too(route, fallback_outcomes):
    # jailed, each needs a capability the worker has none of, and a link it could change would be
    # its own network's; without the jail it runs as the host's root, so the filter must refuse them
    assert fallback_outcomes[route] == "refused", fallback_outcomes


def test_only_the_packages_the_worker_imports_are_bound():
    bound = {Path(path).name for path in policy.package_files()}
    assert {"torch", "numpy"} <= bound
    assert not bound & {"scipy", "quizprep", "pytest", "_pytest"}, bound


CLASS_KEY = 0x51A18
SHARED_SOURCE = (Path(__file__).parents[1] / "solutions" / "softmax.py").read_text()
SHARER = SHARED_SOURCE + f'''
import ctypes as _ctypes
_libc = _ctypes.CDLL(None)
_libc.shmat.restype = _ctypes.c_void_p
_source = {SHARED_SOURCE!r}.encode()
_segment = _libc.shmget({CLASS_KEY}, len(_source) + 1, 0o1666)
if _segment >= 0:
    _ctypes.memmove(_libc.shmat(_segment, None, 0), _source, len(_source))
'''
COPYCAT = f'''import ctypes
_libc = ctypes.CDLL(None)
_libc.shmat.restype = ctypes.c_void_p
_segment = _libc.shmget({CLASS_KEY}, 0, 0)
if _segment >= 0:
    exec(ctypes.string_at(_libc.shmat(_segment, None, 0)).decode())
'''


@jailed
def test_a_classmate_cannot_hand_over_code_in_shared_memory(tmp_path):
    from quizprep.grader.cohort import Cohort, submissions

    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "a_sharer.py").write_text(SHARER)
    (folder / "b_copycat.py").write_text(COPYCAT)
    options = GradeOptions(exercise="softmax", seed=0, limits=Limits(check_seconds=10, total_seconds=30))
    try:
        rows = Cohort(submissions(folder), options, jobs=1, root=folder, seed=0).run()
    finally:
        libc = ctypes.CDLL(None)
        if (segment := libc.shmget(CLASS_KEY, 0, 0)) >= 0:
            libc.shmctl(segment, 0, None)
    passed = {row.file: row.passed for row in rows}
    assert passed == {"a_sharer.py": True, "b_copycat.py": False}, rows


def test_a_class_table_says_when_its_files_ran_without_a_jail(monkeypatch):
    from quizprep.cli.cohort_command import table

    monkeypatch.setenv(launch.OFF_SWITCH, "off")
    caption = str(table([], "softmax").caption)
    assert "No jail (turned off (QUIZPREP_JAIL=off))" in caption and "Not proctored" in caption
    monkeypatch.delenv(launch.OFF_SWITCH)
    assert "No jail" not in str(table([], "softmax").caption) or launch.refused()


@jailed
def test_a_closed_worker_leaves_no_cgroup():
    from quizprep.grader.worker_session import WorkerSession

    session = WorkerSession(Path(__file__).parents[1] / "solutions" / "softmax.py")
    session.launch()
    made = dict(session.jail.cgroups)
    session.close()
    assert not [path for path in made.values() if os.path.exists(path)], made


HOG = '''import threading, torch

def burn():
    x = torch.randn(192, 192)
    while True:
        x @ x  # torch releases the GIL: each thread is a CPU

for _ in range(4):
    threading.Thread(target=burn, daemon=True).start()

def stable_softmax(x, dim=-1):
    return torch.softmax(x, dim)
'''


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


@jailed
def test_a_worker_burning_threads_gets_the_cpu_time_of_its_own_threads_only(tmp_path):
    """A classmate that starts every thread it may and keeps them busy took whole machines (an
    honest file beside it went from 0.2 s to 26.5 s): its cgroup allows it as many CPUs as the
    threads torch computes with (1), so 4 busy threads get one CPU's time between them."""
    import time

    from quizprep.grader.worker_session import WorkerSession

    path = tmp_path / "softmax.py"
    path.write_text(HOG)
    session = WorkerSession(path, forbidden=(), limits=Limits(check_seconds=20))
    try:
        session.start()
        if "cpu" not in session.jail.cgroups:
            pytest.skip("no cpu cgroup may be made here (not root, or v2 without the cpu controller)")
        pid = session.worker_pid
        before, started = _cpu_seconds(pid), time.monotonic()
        time.sleep(2.0)
        rate = (_cpu_seconds(pid) - before) / (time.monotonic() - started)
        said = session.jail.summary()["cpu"]
    finally:
        session.close()
    assert rate < 1.3, f"{rate:.2f} CPUs"
    assert said.startswith("at most 1 CPU's time"), said
