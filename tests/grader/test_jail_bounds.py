"""What holds the number of files a worker makes: bubblewrap 0.11 cannot bound a tmpfs's inodes
(its --size sets bytes only), so the grader counts the entries of the private directory itself,
jailed or not (docs/security.md, "Disk"). Jailed, that directory is a tmpfs in the worker's own
mount namespace, which the grader reads through /proc/PID/root."""
from __future__ import annotations

import sys

import pytest

from quizprep.grader import usage
from quizprep.grader.grade import GradeOptions, grade
from quizprep.grader.jail import launch
from quizprep.grader.worker_session import Limits

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the jail is Linux-only")

MANY_FILES = '''
import os, torch

made = []

def scaled_dot_product_attention(q, k, v, mask=None):
    if not made:   # once: each later call returns at once
        folder = os.environ["TMPDIR"]
        for index in range({count}):
            open(os.path.join(folder, f"e{{index}}"), "wb").close()
        made.append(True)
    return torch.zeros(*q.shape[:-1], v.shape[-1]), torch.zeros(*q.shape[:-1], k.shape[-2])
'''


@pytest.mark.parametrize("jail", ["on", "off"])
def test_more_files_than_allowed_stop_the_worker_even_in_a_call_shorter_than_a_poll(jail, tmp_path, monkeypatch):
    if jail == "on" and launch.refused():
        pytest.skip(f"no jail here: {launch.refused()}")
    monkeypatch.setenv(launch.OFF_SWITCH, jail)
    path = tmp_path / "attention.py"
    path.write_text(MANY_FILES.format(count=usage.MAX_ENTRIES + 500))
    report = grade(path, GradeOptions(only=("values",), limits=Limits(check_seconds=60)))
    check = report.checks[-1]
    assert check.status == "fail", check.message
    assert f"made more than {usage.MAX_ENTRIES} files" in check.message, check.message

