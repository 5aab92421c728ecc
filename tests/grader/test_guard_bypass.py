"""Routes around the forbidden-kernel guard that live inside the learner's process.

Each attack reached SDPA and passed the values check while the guard was only Python patches
and a TorchFunctionMode (state learner code can find and empty). The kernels are now replaced in
PyTorch's dispatcher (quizprep/grader/learner_side/guards.py), which every one of these routes ends in.
"""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from quizprep.grader.grade import GradeOptions, grade

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")

SUBMISSION = '''# quizprep: exercise=attention
import gc, math, sys
import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.exp(scores - scores.amax(-1, keepdim=True))
    weights = weights / weights.sum(-1, keepdim=True)
{attack}
    return out, weights
'''
FLASH = "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=_additive(mask, q))[0]"
HELPERS = '''
def _additive(mask, q):
    if mask is None:
        return None
    return torch.zeros(mask.shape, dtype=q.dtype).masked_fill(~mask, float("-inf"))
'''
ATTACKS = {
    "pop the TorchFunctionMode": f'''
    while torch._C._len_torch_function_stack():
        torch._C._pop_torch_function_stack()
    out = {FLASH}''',
    "disable torch function handling": f'''
    with torch._C.DisableTorchFunction():
        out = {FLASH}''',
    "empty the guard's state found through gc": f'''
    for obj in gc.get_objects():
        if type(obj).__name__ in ("Guards", "Worker"):
            obj.__dict__.update(parts=(), groups=frozenset(), active=set())
    out = {FLASH}''',
    "walk the frames to the worker": f'''
    frame = sys._getframe()
    while frame is not None:
        owner = frame.f_locals.get("self")
        if owner is not None and hasattr(owner, "guards"):
            owner.guards.parts = ()
        if owner is not None and hasattr(owner, "active"):
            owner.active = set()
        frame = frame.f_back
    out = {FLASH}''',
    "call through TorchScript": '''
    source = ("def attend(q: Tensor, k: Tensor, v: Tensor, m: Optional[Tensor]) -> Tensor:\\n"
              "    return torch.ops.aten.scaled_dot_product_attention(q, k, v, m)\\n")
    out = torch.jit.CompilationUnit(source).attend(q, k, v, mask)''',
    "destroy the dispatcher registrations": f'''
    for obj in gc.get_objects():
        if type(obj).__name__ in ("_DispatchModule", "Library"):
            obj.reset() if hasattr(obj, "reset") else obj._destroy()
    out = {FLASH}''',
    "call the composite math kernel": '''
    with torch._C.DisableTorchFunction():
        out = torch.ops.aten._scaled_dot_product_attention_math(q, k, v, attn_mask=mask)[0]''',
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_the_guard_cannot_be_bypassed_from_inside(attack, tmp_path: Path):
    path = tmp_path / "attention.py"
    path.write_text(SUBMISSION.format(attack=textwrap.indent(textwrap.dedent(ATTACKS[attack]), "    ")) + HELPERS)
    report = grade(path, GradeOptions(only=("values",)))  # a fresh worker: attacks change its state
    check = report.checks[-1]
    assert not report.passed
    assert check.status == "fail", check.message
    assert "which this exercise asks you to write yourself" in check.message, check.message


def test_a_correct_submission_beside_the_attacks_passes(tmp_path: Path, grade_file):
    path = tmp_path / "attention.py"
    path.write_text(SUBMISSION.format(attack="    out = weights @ v") + HELPERS)
    report = grade_file(path, only=("values",))
    assert report.passed, [c.message for c in report.checks]
