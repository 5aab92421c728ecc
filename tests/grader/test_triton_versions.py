"""The learner side's Triton hooks on the older Triton releases that pyproject admits (>= 3.4):
the GPU machine's Triton 3.6 has no `InterpreterBuilder.create_atomic_store`, and wrapping it
failed every check of every Triton file there, compiled or not."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

LAUNCHES = Path(__file__).parents[2] / "quizprep" / "grader" / "learner_side" / "launches.py"

COUNTER_ON_TRITON_36 = f"""
import importlib.util, triton
from triton.runtime import interpreter
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
