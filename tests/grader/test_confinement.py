"""The learner's process reads only its own file, Python and PyTorch, and the GPU's devices
(issue 19, reads; issue 18, the GPU's device nodes). Each attack below read its target, or
forged a pass, before the Landlock rules covered reads."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import refused

from quizprep.grader.learner_side import sandbox

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")
REFERENCE = Path(__file__).resolve().parents[2] / "quizprep" / "grader" / "reference.py"
SECRET = "quizprep-secret-7f3a"
READER = """
import torch

def scaled_dot_product_attention(q, k, v, mask=None):
    with open({path!r}, "rb") as stolen:
        raise RuntimeError("read: " + stolen.read(200).decode(errors="replace"))
"""


def _landlock() -> bool:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(sandbox.LANDLOCK_CREATE_RULESET, None, 0, sandbox.LANDLOCK_CREATE_RULESET_VERSION) >= 1


needs_landlock = pytest.mark.skipif(not _landlock(), reason="the kernel has no Landlock")


def _target(tmp_path: Path, name: str) -> Path:
    if name == "a classmate's file":
        path = tmp_path / "classmate.py"
        path.write_text(f"# {SECRET}\n")
    elif name == "a 0600 file":
        path = tmp_path / "private" / "notes.txt"
        path.parent.mkdir()
        path.write_text(SECRET)
        path.chmod(0o600)
    elif name == "the progress database":
        from quizprep.study.store import Store

        path = tmp_path / "data" / "progress.sqlite3"
        path.parent.mkdir()
        with Store.open(path):
            pass
    elif name == "quizprep's reference by path":
        path = REFERENCE
    else:
        path = Path("/etc/shadow")
        if os.geteuid() != 0 or not path.exists():
            pytest.skip("reading /etc/shadow is a root-only route")
    return path


TARGETS = ["a classmate's file", "a 0600 file", "the progress database", "quizprep's reference by path",
           "/etc/shadow as root"]


@needs_landlock
@pytest.mark.parametrize("target", TARGETS)
def test_reading_outside_the_allowed_set_fails(target, tmp_path, grade_file):
    path = _target(tmp_path, target)
    submission = tmp_path / "attention.py"
    submission.write_text(READER.format(path=str(path)))
    check = grade_file(submission, only=("values",)).checks[-1]
    assert check.status == "fail" and refused(check.message), check.message
    assert "read:" not in check.message


@needs_landlock
def test_a_classmates_file_cannot_be_imported(tmp_path, grade_file):
    (tmp_path / "classmate.py").write_text(
        "import math, torch\n\ndef scaled_dot_product_attention(q, k, v, mask=None):\n"
        "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
        "    if mask is not None:\n        s = s.masked_fill(~mask, float('-inf'))\n"
        "    w = torch.softmax(s, dim=-1)\n    return w @ v, w\n")
    submission = tmp_path / "attention.py"
    submission.write_text("from classmate import scaled_dot_product_attention\n")
    report = grade_file(submission)
    assert not report.passed
    assert "classmate" in report.checks[0].message, report.checks[0].message


@needs_landlock
def test_the_reference_cannot_be_loaded_by_path(tmp_path, grade_file):
    submission = tmp_path / "attention.py"
    submission.write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('stolen', {str(REFERENCE)!r})\n"
        "stolen = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(stolen)\n"
        "scaled_dot_product_attention = stolen.attention\n")
    report = grade_file(submission)
    assert not report.passed
    assert report.checks[0].status == "fail" and refused(report.checks[0].message)


def test_a_failure_shows_the_learners_own_path_and_lines(tmp_path, grade_file):
    submission = tmp_path / "attention.py"
    submission.write_text("def scaled_dot_product_attention(q, k, v, mask=None):\n"
                          "    raise ValueError('mine')  # the line shown\n")
    check = grade_file(submission, only=("values",)).checks[-1]
    assert "mine" in check.message
    assert check.traceback == [f"{submission}:2 in scaled_dot_product_attention: "
                               "raise ValueError('mine')  # the line shown"]


def test_a_root_holding_the_package_is_granted_around_it(tmp_path):
    (tmp_path / "site-packages" / "quizprep" / "grader").mkdir(parents=True)
    (tmp_path / "site-packages" / "torch").mkdir()
    (tmp_path / "site-packages" / "numpy.py").write_text("")
    (tmp_path / "venv" / "lib").mkdir(parents=True)
    hidden = [str(tmp_path / "site-packages" / "quizprep"), str(tmp_path)]
    granted = sandbox.readable_roots([str(tmp_path / "site-packages"), str(tmp_path / "venv" / "lib"),
                                      str(tmp_path / "absent")], hidden)
    assert granted == [str(tmp_path / "site-packages" / "numpy.py"), str(tmp_path / "site-packages" / "torch"),
                       str(tmp_path / "venv" / "lib")]


def test_only_the_gpus_character_devices_are_admitted(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("making character devices needs root")
    (tmp_path / "nvidia-caps").mkdir()
    (tmp_path / "dri").mkdir()
    nodes = ["nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-caps/nvidia-cap1", "kfd", "dri/renderD128"]
    for name in nodes + ["sda", "dri/card0"]:
        os.mknod(tmp_path / name, 0o600 | 0o020000, os.makedev(1, 3))
    (tmp_path / "nvidia-fake").write_text("a regular file, not a device")
    assert sandbox.gpu_device_nodes(str(tmp_path)) == sorted(str(tmp_path / name) for name in nodes)


def test_devices_get_read_and_write_only(tmp_path):
    access = sandbox.AccessRules(str(tmp_path), reads=("/usr/lib",), devices=("/dev/nvidia0",))
    rules = dict(access.rules(abi=6))
    assert rules["/dev/nvidia0"] == sandbox.ACCESS_FS_READ_FILE | sandbox.ACCESS_FS_WRITE_FILE
    assert rules["/usr/lib"] & sandbox.ACCESS_FS_WRITE_FILE == 0
    assert access.summary()["devices"] == ["/dev/nvidia0"]


CONFINED = """
import sys
from quizprep.grader.learner_side import sandbox
private, device, other = sys.argv[1:4]
refused = sandbox.confine(sandbox.AccessRules(private, reads=(), devices=(device,)))
assert not refused, refused
with open(device, "r+b") as node:
    node.write(b"granted")
results = []
for attempt in (lambda: open(other, "rb").read(), lambda: open(other, "ab").write(b"x"),
                lambda: open(device + "-sibling", "wb")):
    try:
        attempt()
        results.append("allowed")
    except PermissionError:
        results.append("denied")
print(",".join(results))
"""


@needs_landlock
def test_the_kernel_holds_to_the_device_rule(tmp_path):
    device, other = tmp_path / "nvidia0", tmp_path / "other"
    device.write_bytes(b"")
    other.write_bytes(b"secret")
    (tmp_path / "private").mkdir()
    run = subprocess.run([sys.executable, "-c", CONFINED, str(tmp_path / "private"), str(device), str(other)],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                             filter(None, (str(REFERENCE.parents[2]), os.environ.get("PYTHONPATH"))))})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["denied,denied,denied"]
    assert device.read_bytes() == b"granted"


def test_the_cpu_backstop_cannot_be_lifted_by_the_process_it_limits():
    # a red team's submission raised RLIMIT_CPU's soft limit from 96 s to unlimited: the hard one was left open
    script = ("import resource\nfrom quizprep.grader.learner_side import sandbox\nsandbox.limit_cpu(60)\n"
              "soft, hard = resource.getrlimit(resource.RLIMIT_CPU)\nprint(hard - soft)\n"
              "try:\n    resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n"
              "except ValueError:\n    print('refused')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["1", "refused"], done.stdout + done.stderr
