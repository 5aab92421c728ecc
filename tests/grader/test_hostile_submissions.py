"""Hostile and broken submissions: no forged pass, no process left behind, a verdict in seconds.

Each attack below got `"passed": true` or left a process running before the kernel-enforced
sandbox (quizprep/grader/learner_side/sandbox.py), the not-run-is-failed rule and the fast verdict existed.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import refused

from quizprep.grader.grade import GradeOptions, grade
from quizprep.grader.worker_session import Limits

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")

ATTACK = """
import os, signal, subprocess, sys, torch

def scaled_dot_product_attention(q, k, v, mask=None):
{body}
    scores = q @ k.transpose(-2, -1)
    return torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype), torch.zeros_like(scores)
"""
ATTACKS = {
    "patch the grader's memory": "    open(f'/proc/{os.getppid()}/mem', 'r+b')",
    "write a forged report into the grader's stdout": "    open(f'/proc/{os.getppid()}/fd/1', 'w').write('{}')",
    "start a fresh interpreter without guards": "    subprocess.run([sys.executable, '-c', 'print(1)'], check=True)",
    "fork around the memory limit": "    os.fork()",
    "daemonise a grandchild": "    os.fork() or (os.setsid(), os.fork())",
    "stop the grader": "    os.kill(os.getppid(), signal.SIGSTOP)",
    "signal every process": "    os.kill(-1, signal.SIGCONT)",
    "clear the death signal that ends it with the grader":
        "    import ctypes\n    libc = ctypes.CDLL(None, use_errno=True)\n"
        "    if libc.prctl(1, 0, 0, 0, 0) != 0:\n        raise PermissionError(os.strerror(ctypes.get_errno()))",
    "leave a file in /dev/shm (outside the memory limit, outliving the worker)":
        "    open('/dev/shm/quizprep-cache', 'wb').write(bytes(1 << 20))",
    "change a file outside the worker's private directory": "    open(__file__, 'a').write('# changed')",
}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_attack_is_refused_by_the_kernel(attack, tmp_path, grade_file):
    path = _write(tmp_path, "attention.py", ATTACK.format(body=ATTACKS[attack]))
    report = grade_file(path, only=("values",))
    check = report.checks[-1]
    assert not report.passed
    assert check.status == "fail" and refused(check.message), \
        check.message


def test_sandbox_is_reported(tmp_path):
    path = _write(tmp_path, "attention.py", ATTACK.format(body="    pass"))
    report = grade(path, GradeOptions(only=("values",)))
    sandbox = report.environment["sandbox"]
    keys = ("dies_with_grader", "ptrace_capability_dropped", "syscall_filter", "writes")
    assert {key: sandbox[key] for key in keys} \
        == {"dies_with_grader": True, "ptrace_capability_dropped": True, "syscall_filter": "installed",
            "writes": "the private directory only"}
    assert sandbox["reads"].startswith("your file, Python and PyTorch") and "devices" in sandbox


def test_a_check_that_was_not_run_is_not_a_pass(tmp_path):
    slow = ("import math, time, torch\n\ndef scaled_dot_product_attention(q, k, v, mask=None):\n"
            "    time.sleep(0.6)\n    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
            "    if mask is not None:\n        s = s.masked_fill(~mask, float('-inf'))\n"
            "    w = torch.softmax(s, dim=-1)\n    return w @ v, w\n")
    path = _write(tmp_path, "attention.py", slow)
    report = grade(path, GradeOptions(limits=Limits(check_seconds=10, total_seconds=3)))
    not_run = [c for c in report.checks if c.message.startswith("not run: the overall time limit")]
    assert not_run and all(c.status == "fail" for c in not_run)
    assert not report.passed


def test_slow_wrong_code_is_stopped_at_the_overall_limit_inside_a_check(tmp_path):
    slow = ("import time, torch\n\ndef scaled_dot_product_attention(q, k, v, mask=None):\n"
            "    time.sleep(2.5)  # under the check's limit, every call\n"
            "    return torch.zeros(*q.shape[:-1], v.shape[-1]), torch.zeros(*q.shape[:-1], k.shape[-2])\n")
    path = _write(tmp_path, "attention.py", slow)
    started = time.monotonic()
    report = grade(path, GradeOptions(limits=Limits(check_seconds=3, total_seconds=20)))
    assert time.monotonic() - started < 20 + 3  # the limit counts from the grade's start
    assert any("overall time limit (20 s) ran out" in c.message for c in report.checks)
    assert not report.passed and report.environment["worker_starts"] == 1


HOARDERS = {
    "4,000 threads": ("    import threading, time\n    threading.stack_size(65536)\n"
                      "    for _ in range(4000):\n"
                      "        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n", "threads"),
    "48 files of 8 MiB": ("    import os\n    for i in range(48):\n"
                          "        with open(os.path.join(os.environ['TMPDIR'], f'f{i}'), 'wb') as f:\n"
                          "            f.write(os.urandom(8 << 20))\n    time.sleep(5)\n",
                          "private directory"),
}


@pytest.mark.parametrize("hoard", sorted(HOARDERS))
def test_threads_and_stored_bytes_are_capped(hoard, tmp_path):
    body, words = HOARDERS[hoard]
    path = _write(tmp_path, "attention.py", ATTACK.format(body="    import time\n" + body))
    report = grade(path, GradeOptions(only=("values",), limits=Limits(private_bytes=32 << 20)))
    check = report.checks[-1]
    stopped = words in check.message and "was stopped" in check.message
    # Where the machine caps threads below the grader's limit (a container's pids limit; root ignores
    # RLIMIT_NPROC), the learner's own call fails first, and the report names the same cause.
    refused = "can't start new thread" in check.message and "too many threads" in check.diagnosis
    # In the jail the private directory is a tmpfs of that size: the kernel refuses the write itself.
    refused = refused or "No space left on device" in check.message
    assert check.status == "fail" and (stopped or refused), (check.message, check.diagnosis)


def test_a_hang_gets_its_verdict_in_one_time_limit(tmp_path):
    path = _write(tmp_path, "attention.py", "def scaled_dot_product_attention(q, k, v, mask=None):\n"
                                            "    while True:\n        pass\n")
    started = time.monotonic()
    report = grade(path, GradeOptions(limits=Limits(check_seconds=3)))
    elapsed = time.monotonic() - started
    failed = [c for c in report.checks if c.id != "load"]
    assert all(c.status == "fail" for c in failed) and len({c.cause for c in failed}) == 1
    assert elapsed < 3 + 20, elapsed  # one time limit and one worker start, not one per check
    assert report.environment["worker_starts"] == 1


def _workers_of(path: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "worker.py" in command and str(path) in command:
            found.append(int(entry.name))
    return found


LOOPS = {
    "loops": "",
    # setfsuid changes its credentials, which clears the death signal without the refused prctl
    "clears its death signal through setfsuid, then loops": (
        "    import ctypes\n    libc = ctypes.CDLL(None)\n    libc.setfsuid(65534)\n    libc.setfsuid(0)\n"),
    "ignores SIGTERM and SIGHUP, then loops": (
        "    import signal\n    for number in (signal.SIGTERM, signal.SIGHUP):\n"
        "        signal.signal(number, signal.SIG_IGN)\n"),
}


@pytest.mark.parametrize("learner", sorted(LOOPS))
@pytest.mark.parametrize("ending", ["SIGKILL", "SIGTERM", "SIGHUP"])
def test_no_worker_outlives_the_grader(ending, learner, tmp_path):
    path = _write(tmp_path, "attention.py", "def scaled_dot_product_attention(q, k, v, mask=None):\n"
                                            + LOOPS[learner] + "    while True:\n        pass\n")
    grader = subprocess.Popen([sys.executable, "-m", "quizprep", "grade", str(path), "--timeout", "120"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not _workers_of(path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _workers_of(path), "the worker never started"
    time.sleep(1.0)  # the worker is now looping inside the learner's call
    grader.send_signal(getattr(signal, ending))
    grader.wait(timeout=30)
    deadline = time.monotonic() + 10
    while _workers_of(path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _workers_of(path)


def test_each_grade_draws_a_fresh_seed_that_replays(tmp_path):
    path = _write(tmp_path, "attention.py", ATTACK.format(body="    pass"))

    def seed(*extra: str) -> int:
        run = subprocess.run([sys.executable, "-m", "quizprep", "grade", str(path), "--json", *extra],
                             capture_output=True, text=True, env={**os.environ, "QUIZPREP_TEST": "1"})
        return json.loads(run.stdout)["environment"]["seed"]

    first, second = seed(), seed()
    assert first != second
    assert seed("--seed", str(first)) == first


ODD_RESULTS = {
    "a tensor subclass that claims equality": (
        "class Liar(torch.Tensor):\n"
        "    def __eq__(self, other):\n        return True\n"
        "    @classmethod\n    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
        "        return True\n"
        "out = torch.zeros(*q.shape[:-1], v.shape[-1]).as_subclass(Liar)\n", "could not send the result back"),
    "complex values": ("out = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=torch.complex64)\n", "complex64"),
    "a meta tensor": ("out = torch.empty(*q.shape[:-1], v.shape[-1], device='meta')\n", "meta tensor"),
    "a sparse tensor": ("out = torch.zeros(*q.shape[:-1], v.shape[-1]).to_sparse()\n", "layout"),
}


@pytest.mark.parametrize("result", sorted(ODD_RESULTS))
def test_odd_results_fail_with_a_reason(result, tmp_path, grade_file):
    body, words = ODD_RESULTS[result]
    source = "import torch\n\ndef scaled_dot_product_attention(q, k, v, mask=None):\n" + "".join(
        f"    {line}\n" for line in body.splitlines()) + "    return out, torch.zeros(*q.shape[:-1], k.shape[-2])\n"
    report = grade_file(_write(tmp_path, "attention.py", source), only=("values",))
    check = report.checks[-1]
    assert check.status == "fail" and words in check.message, check.message


def test_threads_left_running_end_with_the_grade(tmp_path):
    source = ("import math, threading, torch\n\ndef spin():\n    while True:\n        pass\n\n"
              "def scaled_dot_product_attention(q, k, v, mask=None):\n"
              "    threading.Thread(target=spin, daemon=False).start()\n"
              "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
              "    if mask is not None:\n        s = s.masked_fill(~mask, float('-inf'))\n"
              "    w = torch.softmax(s, dim=-1)\n    return w @ v, w\n")
    path = _write(tmp_path, "attention.py", source)
    report = grade(path, GradeOptions(only=("values", "mask-causal")))
    assert report.passed
    assert not _workers_of(path)


@pytest.mark.parametrize("forked", [False, True], ids=["interpreter", "forked"])
def test_files_the_worker_wrote_go_with_it(tmp_path, forked):
    from quizprep.grader.learner_side.forkserver import ForkServer
    from quizprep.grader.worker_session import WorkerSession

    body = "    import tempfile\n    tempfile.NamedTemporaryFile(delete=False).write(b'cached')"
    path = _write(tmp_path, "attention.py", ATTACK.format(body=body))
    server = ForkServer() if forked else None
    session = WorkerSession(path, forbidden=("sdpa", "mha"), fork_server=server)
    try:
        grade(path, GradeOptions(only=("values",)), session)
        private = Path(session.private_dir)
        written = {f.read_bytes() for f in private.iterdir() if f.is_file() and f.name != "submission.py"}
        # Jailed, its private directory is a tmpfs of its own, which ends with its mount namespace:
        # nothing it writes reaches the grader's folder at all.
        assert written == (set() if session.jail.spec else {b"cached"})
        assert session.protections["writes"] == "the private directory only"
    finally:
        session.close()
        if server is not None:
            server.close()
    assert not private.exists()


CORRECT_ATTENTION = (
    "import math, torch\n\n"
    "def _attend(q, k, v, mask):\n"
    "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
    "    if mask is not None:\n        s = s.masked_fill(~mask, float('-inf'))\n"
    "    w = torch.softmax(s, dim=-1)\n    return w @ v, w\n\n")


def test_a_correct_result_in_odd_strides_passes(tmp_path, grade_file):
    source = CORRECT_ATTENTION + (
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    out, w = _attend(q, k, v, mask)\n"
        "    out = out.transpose(-2, -1).contiguous().transpose(-2, -1)  # column-major\n"
        "    w = torch.as_strided(w.contiguous(), w.shape, w.contiguous().stride())\n"
        "    return out, w\n")
    report = grade_file(_write(tmp_path, "attention.py", source), only=("values", "shapes", "mask-causal"))
    assert report.passed, [c.message for c in report.checks]


def test_results_cached_across_calls_are_caught(tmp_path, grade_file):
    source = CORRECT_ATTENTION + (
        "_seen = {}\n\n"
        "def scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    key = (tuple(q.shape), tuple(k.shape), q.dtype, mask is None)\n"
        "    if key not in _seen:\n        _seen[key] = _attend(q, k, v, mask)\n"
        "    return _seen[key]\n")
    report = grade_file(_write(tmp_path, "attention.py", source))
    assert not report.passed
    assert next(c for c in report.checks if c.id == "values").status == "fail"  # new inputs, old outputs


def test_the_device_check_stops_at_the_grades_overall_limit(tmp_path):
    # Each probe call stays under the check's limit; all of them together once took 146 s of an 18 s grade.
    slow_on_meta = ("import math, time, torch\n\ndef scaled_dot_product_attention(q, k, v, mask=None):\n"
                    "    if q.device.type == 'meta':\n        time.sleep(2.5)\n"
                    "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                    "    if mask is not None:\n        s = s.masked_fill(~mask, float('-inf'))\n"
                    "    w = torch.softmax(s, dim=-1)\n    return w @ v, w\n")
    path = _write(tmp_path, "attention.py", slow_on_meta)
    started = time.monotonic()
    report = grade(path, GradeOptions(only=("values", "device"), limits=Limits(check_seconds=4, total_seconds=40)))
    elapsed = time.monotonic() - started
    device = report.checks[-1]
    assert device.id == "device" and device.status == "fail" and "overall time limit" in device.message, device
    assert elapsed < 40 + 10, elapsed
