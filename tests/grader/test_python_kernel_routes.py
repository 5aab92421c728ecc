"""Routes to a forbidden kernel that stay in Python, and a forbidden library read from outside
the worker's packages: each forged a pass of the values check (issue 30).

* the original ``F.multi_head_attention_forward``, found through ``gc`` and called with the function
  mode off: its body only uses operators the mha exercise allows (guards.py now replaces the code
  of the original function object, not only the name);
* ``torch._decomp``'s and ``torch._refs``' softmax: PyTorch's own Python versions of the kernel,
  written with exp and amax (their code is replaced too);
* SDPA's CPU flash kernel computing the softmax in the softmax exercise (q = 0, v = I, the logits
  as the mask): the softmax group forbids the attention kernels too;
* SciPy imported from the base Python's site-packages (Landlock now grants only the site-packages
  on the worker's sys.path).
"""
from __future__ import annotations

import os
import site
import sys
from pathlib import Path

import pytest

from quizprep.grader.grade import GradeOptions, grade

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")

MHA_FROM_GC = '''# quizprep: exercise=mha
import gc
import torch
import torch._dynamo  # its tables keep torch's functions, the original among them, within gc's reach
from torch import nn


def _attribute(obj, name):
    try:
        return getattr(obj, name, "")
    except Exception:  # an object whose __getattr__ initialises CUDA, on a machine without it
        return ""


def _original():
    for obj in gc.get_objects():
        if _attribute(obj, "__name__") == "multi_head_attention_forward" and callable(obj) \\
                and _attribute(obj, "__module__") == "torch.nn.functional":
            return obj
    raise RuntimeError("not found")


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        w = torch.cat([self.W_q.weight, self.W_k.weight, self.W_v.weight])
        b = torch.cat([self.W_q.bias, self.W_k.bias, self.W_v.bias])
        extra = None
        if mask is not None:
            extra = torch.zeros(mask.shape, dtype=query.dtype, device=query.device).masked_fill(~mask, float("-inf"))
            extra = extra.expand(query.shape[0], self.n_heads, query.shape[1], key.shape[1]) if extra.dim() == 4 \\
                else extra.unsqueeze(1).expand(query.shape[0], self.n_heads, query.shape[1], key.shape[1])
            extra = extra.reshape(-1, query.shape[1], key.shape[1])
        with torch._C.DisableTorchFunction():
            out, weights = _original()(
                query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1), query.shape[-1], self.n_heads,
                w, b, None, None, False, 0.0, self.W_o.weight, self.W_o.bias, training=False, attn_mask=extra,
                need_weights=True, average_attn_weights=False)
        return out.transpose(0, 1), weights
'''
SOFTMAX = '''# quizprep: exercise=softmax
import torch
{imports}


def stable_softmax(x, dim=-1):
{body}
'''
SOFTMAX_ROUTES = {
    "torch._decomp's softmax": ("import torch._decomp.decompositions as d", "    return d._softmax(x, dim, False)"),
    "torch._decomp's table": ("import torch._decomp", "    table = torch._decomp.decomposition_table\n"
                              "    return table[torch.ops.aten._softmax.default](x, dim, False)"),
    "torch._refs' softmax": ("import torch._refs", "    return torch._refs.softmax(x, dim)"),
    "SDPA's CPU flash kernel": ("", '''    x = x.movedim(dim, -1)
    shape, m = x.shape, x.shape[-1]
    rows = x.reshape(-1, 1, 1, m)
    q = torch.zeros(rows.shape[0], 1, 1, m, dtype=x.dtype)
    k = torch.zeros(rows.shape[0], 1, m, m, dtype=x.dtype)
    v = torch.eye(m, dtype=x.dtype).expand(rows.shape[0], 1, m, m)
    with torch._C.DisableTorchFunction():
        out = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=rows, scale=1.0)[0]
    return out.reshape(shape).movedim(-1, dim)'''),
}


# The red team's probe (tests/grader/redteam_2026_11_28/f1_flex_math.py.txt): FlexAttention's eager
# body, called directly, did all 20 checks' attention.
FLEX_BODY = '''import math
import torch
from torch._higher_order_ops.flex_attention import math_attention


def scaled_dot_product_attention(q, k, v, mask=None):
    lead, (n, d), m = q.shape[:-2], q.shape[-2:], k.shape[-2]
    q4, k4 = q.reshape(-1, 1, n, d), k.expand(*lead, m, d).reshape(-1, 1, m, d)
    v4 = v.expand(*lead, m, v.shape[-1]).reshape(-1, 1, m, v.shape[-1])
    keep = torch.ones((), dtype=torch.bool)
    out = math_attention(q4, k4, v4, lambda s, b, h, i, j: s, (lambda b, h, i, j: keep,), 1 / math.sqrt(d), {})[0]
    eye = torch.eye(m, dtype=q.dtype).expand(q4.shape[0], 1, m, m)
    weights = math_attention(q4, k4, eye, lambda s, b, h, i, j: s, (lambda b, h, i, j: keep,), 1 / math.sqrt(d), {})[0]
    return out.reshape(*lead, n, -1), weights.reshape(*lead, n, m)
'''


def _values(path: Path, check: str = "values") -> tuple[bool, str]:
    report = grade(path, GradeOptions(only=(check,)))  # a fresh worker: some attacks change its state
    failed = next((c for c in report.checks if c.status == "fail"), report.checks[-1])
    return report.passed, " ".join([failed.message, failed.diagnosis, *failed.traceback])


def test_the_original_mha_function_found_through_gc_is_refused(tmp_path: Path) -> None:
    """Once torch._dynamo was imported before the guards, one of its tables kept the original
    function within gc's reach, and the guards refused the call. The worker no longer imports it
    (torch_start.run_without_dynamo) and the guards replace every other reference: the walk, even
    with torch._dynamo imported by the file, finds no original to call."""
    path = tmp_path / "mha.py"
    path.write_text(MHA_FROM_GC)
    passed, message = _values(path, "self-attention")
    assert not passed, "forged pass"
    assert "raised RuntimeError: not found" in message, message


def test_flex_attentions_python_body_called_directly_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "attention.py"
    path.write_text(FLEX_BODY)
    passed, message = _values(path)
    assert not passed, "forged pass"
    assert "uses torch._higher_order_ops.flex_attention.math_attention, which this exercise asks" in message, message


@pytest.mark.parametrize("route", sorted(SOFTMAX_ROUTES))
def test_pytorchs_other_softmax_implementations_are_refused(route: str, tmp_path: Path) -> None:
    imports, body = SOFTMAX_ROUTES[route]
    path = tmp_path / "softmax.py"
    path.write_text(SOFTMAX.format(imports=imports, body=body))
    passed, message = _values(path)
    assert not passed, "forged pass"
    assert "which this exercise asks you to write yourself" in message, message


def _base_site_packages() -> list[str]:
    """The base interpreter's site-packages when the grader runs from a virtual environment."""
    if sys.prefix == sys.base_prefix:
        return []
    return [path for path in site.getsitepackages([sys.base_prefix]) if os.path.isdir(path)]


@pytest.mark.skipif(not _base_site_packages(), reason="not run from a virtual environment")
def test_the_base_pythons_site_packages_cannot_be_imported_from(tmp_path: Path) -> None:
    path = tmp_path / "softmax_numpy.py"
    # Listing them stands for importing SciPy from there: the test needs no SciPy installed.
    path.write_text(f'''# quizprep: exercise=softmax_numpy
import sys
sys.path[:0] = {_base_site_packages()!r}
import json  # noqa: F401 - the base Python's standard library stays readable
import os
import numpy as np
listing = [name for folder in sys.path[:{len(_base_site_packages())}] for name in os.listdir(folder)]


def stable_softmax(x, dim=-1):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)
''')
    passed, message = _values(path)
    assert not passed, "the base site-packages were listed"
    assert "PermissionError" in message, message
