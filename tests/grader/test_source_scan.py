"""Files whose source reaches for a route the worker cannot close from inside are flagged
"read this one" in class tables (issue 30): ctypes, mmap, gc walks, /proc/self/maps,
torch._decomp/_refs, SciPy."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import HERE, SOLUTIONS
from test_native_routes import HEAD, RESET
from test_python_kernel_routes import MHA_FROM_GC

from quizprep.cli.cohort_command import table, write_csv
from quizprep.grader.cohort import row_from
from quizprep.grader.grade import GradeReport
from quizprep.grader.source_scan import DYNAMIC, HOST_ARITHMETIC, META, OTHER_PACKAGES as OTHER, OWN_ATTENTION as OWN, \
    PRIVATE_TORCH as PRIVATE, reaches_around

CORRECT = sorted(SOLUTIONS.glob("*.py")) + sorted((HERE / "variants").glob("*.py"))
THREADS = "threads (the grader's audits watch only the calling thread)"
AGAIN = "modules run again from their source (__loader__, exec_module)"


@pytest.mark.parametrize("path", CORRECT, ids=[p.stem for p in CORRECT])
def test_correct_files_are_not_flagged(path: Path) -> None:
    assert reaches_around(path.read_text()) == []


@pytest.mark.parametrize("source, expected", [
    (HEAD + RESET, ["native code (ctypes)", "the object graph (gc)", "torch._C",
                    "code built at run time (exec, eval, compile, __import__)", PRIVATE, "/proc/self/maps (read)"]),
    (MHA_FROM_GC, ["the object graph (gc)", "torch._C", PRIVATE, META]),  # torch._dynamo; except Exception
    ("import torch._decomp.decompositions as d\nd._softmax", ["torch._decomp"]),
    ("from torch import _refs\n", ["torch._refs"]),
    ("import torch\ntorch._refs.softmax(x, 0)\n", ["torch._refs"]),
    ("from scipy.special import softmax\n", ["SciPy"]),
    ("m = __import__('mmap')\n", ["memory mapping (mmap)", "code built at run time (exec, eval, compile, __import__)"]),
    # third red team: names computed at run time
    ("import sys\nc = sys.modules['c' + 'types']\n", ["modules looked up by name (sys.modules)"]),
    ("import sys\ng = sys.modules.get('g' + 'c')\n", ["modules looked up by name (sys.modules)"]),
    ("m = __import__('g' + 'c')\n", ["code built at run time (exec, eval, compile, __import__)"]),
    ("exec(bytes.fromhex('696d706f7274206763'))\n", ["code built at run time (exec, eval, compile, __import__)"]),
    ("import builtins\nbuiltins.__dict__['__imp' + 'ort__']('gc')\n", ["builtins", DYNAMIC]),
    # Names in strings or namespaces (eighth red team): PyTorch's own attention reached unflagged.
    ("import operator, torch\nf = operator.attrgetter('onnx.ops.attention')(torch)\n", [DYNAMIC]),
    ("from operator import attrgetter\n", [DYNAMIC]),
    ("from torch.onnx.ops import *\nf = globals()['attention']\n", [DYNAMIC]),
    ("import torch.onnx.ops as o\nf = vars(o)['\\x61ttention']\n", [DYNAMIC]),
    ("import torch\nf = getattr(torch, 'on' + 'nx')\n", [DYNAMIC]),
    ("import torch.onnx.ops as o\nf = getattr(o, name)\n", [DYNAMIC]),
    ("import torch\nf = getattr(torch.onnx.ops, 'attention')\n", [OWN]),
    ("import torch\ncode = torch.nn.functional.softmax.__code__\n", ["function bodies copied (__code__)"]),
    ("import torch\ndef size(dtype):\n    return getattr(torch, dtype).itemsize\n", []),
    ("def pick(self, name):\n    return getattr(self, name)\n", []),
    ("import torch\nf = torch.compile(g)\nimport re\nr = re.compile('x')\n", []),
    ("import torch\nwith torch.utils._python_dispatch._disable_current_modes():\n    pass\n",
     ["dispatch modes (torch.utils._python_dispatch)"]),
    ("def f(:\n", []),
    # fourth red team: the audits watch only the calling thread; a module run again from its source
    ("import threading\nthreading.Thread(target=f).start()\n", [THREADS]),
    ("from concurrent.futures import ThreadPoolExecutor\n", [THREADS]),
    ("from torch.ao.nn.quantizable.modules import activation as a\na.__loader__.exec_module(m)\n", [AGAIN]),
    ("import torch.nn.functional as F\nspec = F.__spec__\n", [AGAIN]),
    # sixth red team: attention written in Python elsewhere in torch and in other packages; the meta probe
    ("from torch._inductor.fx_passes.fuse_attention import _sfdp_pattern_5\n", [PRIVATE]),
    ("import torch\nattend = torch.nn.attention.experimental._paged_attention\n", [PRIVATE, OWN]),
    ("import torch\nprint(torch.__version__)\n", []),
    ("from transformers.integrations.sdpa_attention import sdpa_attention_forward\n", [OTHER]),
    ("import xformers.ops as xops\n", [OTHER]),
    ("import math, functools, typing\nimport numpy as np\nimport torch\nimport triton\nimport einops\n", []),
    ("def f(q):\n    if q.device.type == 'meta':\n        return q\n", [META]),
    ("def f(q):\n    return q.is_meta\n", [META]),
    # seventh red team: PyTorch's own attention and softmax, through aliases; errors caught around tensor code
    ("import torch.onnx.ops as o\ny = o.attention(q, k, v, softmax_precision=1)\n", [OWN]),
    ("import torch as t\ny = t.distributions.transforms.SoftmaxTransform()(x)\n", [OWN]),
    ("import torch.nn.functional as F\ny = F.softmax(x, -1) + torch.softmax(x, -1) + F.log_softmax(x, -1)\n", []),
    ("try:\n    q.flatten()[:1].item()\nexcept Exception:\n    pass\n", [META]),
    ("try:\n    import triton\nexcept ImportError:\n    triton = None\n", []),
])
def test_routes_are_named_from_the_source(source: str, expected: list[str]) -> None:
    assert reaches_around(source) == expected


HOST = HOST_ARITHMETIC
HOST_ENTRY = ("flash_attention",)  # the Triton track's
KERNEL = "import triton\n@triton.jit\ndef _k(Q, K):\n    s = tl.dot(q, k)\n"


@pytest.mark.parametrize("source, flagged", [
    (KERNEL + "def flash_attention(q, k, v, causal=False):\n    s = q @ k.mT\n", True),
    (KERNEL + "def flash_attention(q, k, v, causal=False):\n    return _scores(q, k)\n"
              "def _scores(q, k):\n    return torch.einsum('bhnd,bhmd->bhnm', q, k)\n", True),
    (KERNEL + "def flash_attention(q, k, v, causal=False):\n    return np.matmul(q.numpy(), k.numpy())\n", True),
    # a self-test that the entry point never calls, and the kernel's own tl.dot, are not host code
    (KERNEL + "def flash_attention(q, k, v, causal=False):\n    _k[(1,)](q, k)\n"
              "def reference(q, k):\n    return q @ k.mT\n"
              "if __name__ == '__main__':\n    print(torch.matmul(q, k))\n", False),
    (KERNEL + "def flash_attention(q, k, v, causal=False):\n    scale = q.shape[-1] ** -0.5\n"
              "    lse = m + torch.log(l)\n    grid = (max(1, n // 64), sum(q.shape[:2]))\n", False),
    # fourth red team: broadcast products and reductions, and arithmetic kept in a module-level lambda
    (KERNEL + "def flash_attention(q, k, v, causal=False):\n"
              "    s = (q[..., :, None, :] * k[..., None, :, :]).sum(-1)\n", True),
    (KERNEL + "_scores = lambda q, k: torch.exp(q)\n"
              "def flash_attention(q, k, v, causal=False):\n    return _scores(q, k)\n", True),
    (KERNEL + "class _Host:\n    def run(self, q):\n        return q.softmax(-1)\n"
              "def flash_attention(q, k, v, causal=False):\n    return _Host().run(q)\n", True),
])
def test_a_kernel_tracks_host_arithmetic_is_flagged(source: str, flagged: bool) -> None:
    assert reaches_around(source, HOST_ENTRY) == ([HOST] if flagged else [])
    assert reaches_around(source) == []


def test_the_kernel_tracks_correct_files_have_no_host_arithmetic() -> None:
    passing = [SOLUTIONS / "flash_triton.py", *sorted((HERE / "triton_variants").glob("*.py")),
               *(p for p in sorted(HERE.glob("triton_heldout*/*.py")) if p.stem.endswith("_pass"))]
    assert len(passing) >= 8
    assert {p.name: reaches_around(p.read_text(), HOST_ENTRY) for p in passing} == \
        {p.name: [] for p in passing}


def test_the_class_table_and_csv_say_read_this_one(tmp_path: Path) -> None:
    path = tmp_path / "alice.py"
    path.write_text("import ctypes\n")
    row = row_from(GradeReport("softmax", "Softmax", str(path), [], {}), "alice.py", 1.0, path)
    assert row.read_this == ["native code (ctypes)"] and row.summary()["read_this"] == row.read_this
    assert "read this one: native code (ctypes)" in str(table([row], "softmax").columns[4]._cells)
    write_csv([row], tmp_path / "class.csv")
    assert "native code (ctypes)" in (tmp_path / "class.csv").read_text()
