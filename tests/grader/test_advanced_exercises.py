"""The flash, online-softmax, kv-cache, sliding-window and NumPy-track exercises: names resolve,
every diagnosis teaches a question, stubs get the one-line report, and the NumPy track's
conversions hold (arrays in, arrays out, anything else named)."""
from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from conftest import HERE

from quizprep.grader.exercises import UnknownExercise, available, load_spec
from quizprep.grader.lessons import LESSONS
from quizprep.grader.report import render

EXERCISES = HERE.parent.parent / "exercises"
NEW = ("flash", "online_softmax", "kv_cache", "sliding_window", "attention_numpy", "softmax_numpy")


@pytest.mark.parametrize("name", NEW)
def test_names_resolve_with_dashes_or_underscores(name: str) -> None:
    assert name in available()
    assert load_spec(name) is load_spec(name.replace("_", "-"))
    assert "_" not in load_spec(name).name


def test_an_unknown_name_is_still_refused() -> None:
    with pytest.raises(UnknownExercise, match="unknown exercise 'flash-numpy'"):
        load_spec("flash-numpy")


@pytest.mark.parametrize("name", NEW[:4])
def test_every_diagnosis_points_to_a_lesson(name: str) -> None:
    module = __import__(f"quizprep.grader.exercises.{name}", fromlist=["PROBLEM"])
    for hypothesis in module.PROBLEM.hypotheses:
        assert hypothesis.quiz in LESSONS and hypothesis.hint and hypothesis.title, hypothesis.id
    # Checks that fail on their own (memory, cache shape) name their question through lesson(),
    # which raises only when that failure happens: every id they use must exist now.
    source = (HERE.parents[1] / "quizprep" / "grader" / "exercises" / f"{name}.py").read_text()
    for quiz in re.findall(r'lesson\("([a-z0-9-]+)"\)', source):
        assert quiz in LESSONS, quiz


def rendered(report) -> str:
    console = Console(file=io.StringIO(), width=100, color_system=None)
    render(report, console)
    return console.file.getvalue()


@pytest.mark.parametrize("name", NEW)
def test_untouched_stub_gets_one_line(name: str, grade_file) -> None:
    report = grade_file(EXERCISES / f"{name}.py")
    text = rendered(report)
    assert "Not started yet" in text and f"{name}.py:" in text and "╭" not in text
    assert not report.passed


def test_numpy_track_names_a_result_that_is_not_an_array(tmp_path, grade_file) -> None:
    path = tmp_path / "softmax_lists.py"
    path.write_text("# quizprep: exercise=softmax-numpy\nimport numpy as np\n\n"
                    "def stable_softmax(x, dim=-1):\n    e = np.exp(x - x.max(axis=dim, keepdims=True))\n"
                    "    return (e / e.sum(axis=dim, keepdims=True)).tolist()\n")
    report = grade_file(path, only=("values",))
    values = next(c for c in report.checks if c.id == "values")
    assert values.status == "fail" and "expects np.ndarray" in values.message, values.message


def test_numpy_track_leaves_out_only_gradients_and_bfloat16() -> None:
    for torch_name, numpy_name in (("attention", "attention_numpy"), ("softmax", "softmax_numpy")):
        torch_ids = [c.id for c in load_spec(torch_name).checks]
        numpy_ids = [c.id for c in load_spec(numpy_name).checks]
        assert set(torch_ids) - set(numpy_ids) == {"gradients"} and "dtypes" in numpy_ids


def test_init_copies_every_new_stub(tmp_path) -> None:
    import argparse

    from quizprep.cli.grade_command import init_command

    assert init_command(argparse.Namespace(directory=tmp_path / "ex", force=False)) == 0
    for name in NEW:
        copied = (tmp_path / "ex" / f"{name}.py").read_text()
        assert copied == (EXERCISES / f"{name}.py").read_text() and "NotImplementedError" in copied


def test_numpy_track_keeps_torch_kernels_off_limits(tmp_path, grade_file) -> None:
    path = tmp_path / "through_torch.py"
    path.write_text("# quizprep: exercise=attention-numpy\nimport numpy as np\nimport torch\n"
                    "import torch.nn.functional as F\n\n"
                    "def scaled_dot_product_attention(q, k, v, mask=None):\n"
                    "    out = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v)))\n"
                    "    return out.numpy(), np.zeros(q.shape[:-1] + (k.shape[-2],), q.dtype)\n")
    report = grade_file(path, only=("values",))
    values = next(c for c in report.checks if c.id == "values")
    assert values.status == "fail" and "scaled_dot_product_attention" in values.message, values.message


@pytest.mark.parametrize("exercise, body", [
    ("softmax-numpy", "def stable_softmax(x, dim=-1):\n    return torch.from_numpy(x).double().exp().numpy()\n"),
    ("attention-numpy", "def scaled_dot_product_attention(q, k, v, mask=None):\n"
                        "    w = (torch.from_numpy(q) @ torch.from_numpy(k).mT).softmax(-1)\n"
                        "    return (w @ torch.from_numpy(v)).numpy(), w.numpy()\n"),
])
def test_numpy_track_refuses_torch_computing_the_answer(exercise, body, tmp_path, grade_file) -> None:
    """Right values computed in torch and handed back as arrays: the track is NumPy only."""
    path = tmp_path / "in_torch.py"
    path.write_text(f"# quizprep: exercise={exercise}\nimport numpy as np\nimport torch\n\n{body}")
    report = grade_file(path, only=("values",))
    values = next(c for c in report.checks if c.id == "values")
    assert values.status == "fail" and "on the NumPy track, which is NumPy only" in values.message, values.message
    assert "NumPy alone" in values.hint and not values.quiz


def test_numpy_track_sees_arrays_changed_in_place(tmp_path, grade_file) -> None:
    path = tmp_path / "softmax_in_place.py"
    path.write_text("# quizprep: exercise=softmax-numpy\nimport numpy as np\n\n"
                    "def stable_softmax(x, dim=-1):\n    x -= x.max(axis=dim, keepdims=True)\n"
                    "    np.exp(x, out=x)\n    x /= x.sum(axis=dim, keepdims=True)\n    return x.copy()\n")
    report = grade_file(path, only=("no-mutation",))
    check = next(c for c in report.checks if c.id == "no-mutation")
    assert check.status == "fail" and "modified in place" in check.message, check.message
