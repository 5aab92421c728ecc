"""The learner side's Triton hooks on the older Triton releases that pyproject admits (>= 3.4):
the GPU machine's Triton 3.6 has no `InterpreterBuilder.create_atomic_store`, and wrapping it
failed every check of every Triton file there, compiled or not; and 3.6's interpreter takes a
scalar's Python int in a way NumPy 2.4 refuses, which failed every kernel with a loop on a CPU."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

LAUNCHES = Path(__file__).parents[2] / "quizprep" / "grader" / "learner_side" / "launches.py"
EXAMPLE = Path(__file__).parents[1] / "solutions" / "flash_triton.py"

COUNTER_ON_TRITON_36 = f"""
import importlib.util, triton
from triton.runtime import interpreter
if hasattr(interpreter.InterpreterBuilder, "create_atomic_store"):
    del interpreter.InterpreterBuilder.create_atomic_store  # as in Triton 3.6
spec = importlib.util.spec_from_file_location("launches", {str(LAUNCHES)!r})
launches = importlib.util.module_from_spec(spec); spec.loader.exec_module(launches)
counter = launches.LaunchCounter(); counter.start()
builder = interpreter.InterpreterBuilder
print(counter.installed, builder.create_atomic_rmw.__qualname__, hasattr(builder, "create_atomic_store"))
"""


def test_launch_counter_starts_where_triton_has_no_atomic_store():
    pytest.importorskip("triton")
    done = subprocess.run([sys.executable, "-c", COUNTER_ON_TRITON_36], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    installed, rmw, has_store = done.stdout.split()
    assert (installed, has_store) == ("True", "False")
    assert rmw.startswith("LaunchCounter._atomic"), "the atomics Triton has are still watched"


INTERPRETED_AS_IN_TRITON_36 = f"""
import importlib.util, math, os, sys
os.environ["TRITON_INTERPRET"] = "1"
import torch
from triton.runtime import interpreter
triton_own = interpreter._patch_lang_tensor
def as_in_triton_36(tensor, scope):
    triton_own(tensor, scope)
    scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data))  # 3.6: no squeeze
interpreter._patch_lang_tensor = as_in_triton_36
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); return module
if sys.argv[1] == "mended":
    load("launches", {str(LAUNCHES)!r}).mend_interpreter()
q, k, v = torch.randn(3, 1, 2, 37, 64).unbind(0)
out, lse = load("example", {str(EXAMPLE)!r}).flash_attention(q, k, v, causal=True)
scores = (q @ k.mT / math.sqrt(64)).masked_fill(torch.ones(37, 37, dtype=torch.bool).triu(1), -math.inf)
print(torch.allclose(out, scores.softmax(-1) @ v, atol=1e-5))
"""


@pytest.mark.parametrize("mended", [True, False], ids=["mended", "as shipped"])
def test_a_kernel_with_a_loop_runs_interpreted_where_triton_36_meets_numpy_2_4(mended):
    pytest.importorskip("triton")
    # NumPy 2.4 refuses int() of a one-element array; 1.25 to 2.3 warn, made an error here
    done = subprocess.run([sys.executable, "-W", "error:Conversion of an array with ndim:DeprecationWarning", "-c",
                           INTERPRETED_AS_IN_TRITON_36, "mended" if mended else "as shipped"],
                          capture_output=True, text=True)
    if mended:
        assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr[-2000:]
    else:
        refused = ("only 0-dimensional arrays", "array with ndim > 0")  # NumPy 2.4, and its warning before
        assert done.returncode != 0 and any(text in done.stderr for text in refused), done.stderr[-2000:]
