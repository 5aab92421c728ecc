"""The flash exercise's memory check cannot be fooled from inside the learner's process.

Both forged a pass of the memory check while it rested on the in-process audit alone
(learner_side/memaudit.py, a TorchDispatchMode): all n×m scores built in NumPy, which the audit
cannot see, and the audit function replaced from the learner's file. The grader now also reads the
worker's peak resident size from /proc (usage.reset_peak / peak_growth), which no code in the
worker can change.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from quizprep.grader import usage
from quizprep.grader.grade import GradeOptions, grade

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux-only")

NUMPY_SCORES = '''# quizprep: exercise=flash
import math
import numpy as np
import torch


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    qn, kn, vn = (t.detach().float().numpy() for t in (q, k, v))
    scores = qn @ np.swapaxes(kn, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        scores = np.where(np.arange(m)[None, :] > np.arange(n)[:, None] + (m - n), -np.inf, scores)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    return torch.from_numpy((w / w.sum(-1, keepdims=True)) @ vn).to(q.dtype)
'''
AUDIT_REPLACED = '''# quizprep: exercise=flash
import math
import sys
import torch

for _module in list(sys.modules.values()):
    if hasattr(_module, "audit") and hasattr(_module, "MemoryReport"):
        _module.audit = lambda fn, *args, _report=_module.MemoryReport, **kwargs: (fn(*args, **kwargs), _report())


def flash_attention(q, k, v, *, causal=False, block_size=64):
    n, m = q.shape[-2], k.shape[-2]
    scores = q.float() @ k.float().transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        hidden = torch.arange(m, device=q.device) > torch.arange(n, device=q.device)[:, None] + (m - n)
        scores = scores.masked_fill(hidden, float("-inf"))
    w = (scores - scores.amax(-1, keepdim=True)).exp()
    return ((w / w.sum(-1, keepdim=True)) @ v.float()).to(q.dtype)
'''


@pytest.mark.parametrize("source", [NUMPY_SCORES, AUDIT_REPLACED], ids=["scores in NumPy", "audit replaced"])
def test_scores_held_outside_the_audits_sight_fail_the_memory_check(source: str, tmp_path: Path) -> None:
    path = tmp_path / "flash.py"
    path.write_text(source)
    report = grade(path, GradeOptions(only=("memory",)))
    check = report.checks[-1]
    assert not report.passed, "forged pass"
    # NumPy's arrays show in the process's growth, and the tensors handed to NumPy are named first
    assert check.status == "fail" and ("measured by the grader" in check.message
                                       or "read tensors out of torch (Tensor.numpy())" in check.message), check.message


def test_the_peak_is_read_from_outside_and_reset_before_a_call() -> None:
    import subprocess

    # 64 MiB touched and given back (mmap'ed, so freed to the kernel): the peak stays 64 MiB up.
    code = "import sys; b = bytearray(64 << 20); del b; print(flush=True); sys.stdin.read()"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline()
        baseline = usage.reset_peak(child.pid)
        growth = usage.peak_growth(child.pid, baseline)
        assert baseline is not None and growth is not None
        assert growth < 4 << 20, "the peak before the reset was kept"
    finally:
        child.kill()
        child.wait()
