"""Issue 31: no internal error on any output. Each exercise's example solution is wrapped so that
every call returns something the contract does not allow (a wrong shape, `return q, q`, a wrong
dtype, a list, None, a 0-d tensor, a meta tensor, a tuple of the wrong length or order): either a
different kind on each call, so that every check meets several kinds, or one kind on every call,
so that checks comparing two calls (a metamorphic check) see two alike; every check must end in a
verdict about the learner's code, never "internal grader error"."""
from __future__ import annotations

import pytest

from conftest import SOLUTIONS

from quizprep.grader.exercises import load_spec

# Appended to a solution: ENTRY names its entry points, START the first kind, STEP 1 to cycle, 0 to keep it.
WRAPPER = '''
import itertools as _itertools

import numpy as _np
import torch as _torch

_calls = _itertools.count(START, STEP)


def _wrong_one(value, kind):
    array = isinstance(value, _np.ndarray)
    if not (array or isinstance(value, _torch.Tensor)):
        return value
    return (
        lambda: value[..., :-1] if value.ndim else value,  # one column short
        lambda: value[None],  # an extra leading axis
        lambda: value.astype(_np.int64) if array else value.to(_torch.int64),
        lambda: value.tolist(),
        lambda: None,
        lambda: value.sum(),  # 0-d
        lambda: value if array else value.to("meta"),
        lambda: value.astype(bool) if array else value.bool(),
    )[kind % 8]()


def _wrong(value):
    kind = next(_calls)
    if isinstance(value, tuple) and value:
        if kind % 10 == 8:
            return (value[0],) * len(value)  # `return q, q`: the first output twice
        if kind % 10 == 9:
            return value[::-1] if len(value) > 1 else value + value
        return tuple(_wrong_one(item, kind) if i == kind % len(value) else item for i, item in enumerate(value))
    return _wrong_one(value, kind)


def _wrapped(function):
    return lambda *args, **kwargs: _wrong(function(*args, **kwargs))


for _name in ENTRY:
    _entry = globals()[_name]
    if isinstance(_entry, type):
        _entry.forward = (lambda forward: lambda self, *a, **k: _wrong(forward(self, *a, **k)))(_entry.forward)
    else:
        globals()[_name] = _wrapped(_entry)
'''
# flash_triton is the Triton track's (its kernels are graded through their own launcher); budget
# returns integers, and its odd results are tests/grader/test_budget_exercise.py's.
EXERCISES = ("attention", "attention_numpy", "mha", "gqa", "masking", "softmax", "softmax_numpy", "online_softmax",
             "kv_cache", "sliding_window", "flash")


# (first kind, step): every kind in turn, or the first output twice on every call (`return q, q`).
KINDS = {"cycled": (0, 1), "first-twice": (8, 0)}


@pytest.mark.parametrize("kinds", sorted(KINDS))
@pytest.mark.parametrize("name", EXERCISES)
def test_every_check_gives_a_verdict_on_any_output(grade_file, tmp_path, name, kinds):
    entry = load_spec(name).entry_points
    start, step = KINDS[kinds]
    source = (SOLUTIONS / f"{name}.py").read_text() + WRAPPER.replace("ENTRY", repr(entry)).replace(
        "START", str(start)).replace("STEP", str(step))
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    report = grade_file(path, exercise=name)
    errors = [(c.id, c.message) for c in report.checks if c.status == "error" or "internal grader error" in c.message]
    assert not errors, errors
    assert not report.passed
