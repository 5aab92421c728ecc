"""The rope, attention-backward and paged-decode exercises (issue 34): names resolve, every named
mistake teaches a question, stubs get the one-line report, `quizprep init` copies them, a failure
reaches Exercism's results.json with its name, and RoPE's reference is a rotation with the
relative property. CUDA runs are marked `cuda`."""
from __future__ import annotations

import argparse
import importlib
import io
import re

import pytest
import torch
from rich.console import Console

from conftest import HERE, SOLUTIONS, expectation

from quizprep.grader.exercises import available, load_spec
from quizprep.grader.exercises.rope import HALF, INTERLEAVED, reference_rope
from quizprep.grader.lessons import LESSONS
from quizprep.grader.report import render

EXERCISES = HERE.parent.parent / "exercises"
NEW = ("rope", "attention_backward", "paged_decode")


@pytest.mark.parametrize("name", NEW)
def test_names_resolve_and_every_mistake_teaches_a_question(name: str) -> None:
    assert name in available() and load_spec(name) is load_spec(name.replace("_", "-"))
    module = __import__(f"quizprep.grader.exercises.{name}", fromlist=["PROBLEM"])
    for hypothesis in module.PROBLEM.hypotheses:
        assert hypothesis.quiz in LESSONS and hypothesis.hint and hypothesis.title, hypothesis.id
    source = (HERE.parents[1] / "quizprep" / "grader" / "exercises" / f"{name}.py").read_text()
    assert set(re.findall(r'lesson\("([a-z0-9-]+)"\)', source)) <= set(LESSONS)


@pytest.mark.parametrize("name", NEW)
def test_untouched_stub_gets_one_line(name: str, grade_file) -> None:
    report = grade_file(EXERCISES / f"{name}.py")
    console = Console(file=io.StringIO(), width=100, color_system=None)
    render(report, console)
    text = console.file.getvalue()
    assert "Not started yet" in text and f"{name}.py:" in text and not report.passed


def test_init_copies_the_new_stubs(tmp_path) -> None:
    from quizprep.cli.grade_command import init_command

    assert init_command(argparse.Namespace(directory=tmp_path / "ex", force=False)) == 0
    for name in NEW:
        copied = (tmp_path / "ex" / f"{name}.py").read_text()
        assert copied == (EXERCISES / f"{name}.py").read_text() and "NotImplementedError" in copied


def test_a_named_mistake_reaches_exercism_results(grade_file) -> None:
    from quizprep.grader.exercism import results

    payload = results(grade_file(HERE / "mutants" / "paged_decode_tail_unmasked.py", only=("ragged",)))
    failed = [test for test in payload["tests"] if test["status"] == "fail"]
    assert payload["status"] == "fail" and failed
    assert "stale slots" in failed[0]["message"], failed[0]["message"]


def test_a_decode_step_that_scales_the_callers_q_is_named(grade_file, tmp_path) -> None:
    """vLLM's test reference scales a view of its query in place (q *= scale): the output is right, so
    only the inputs after the call show that the caller's q was changed."""
    scores = '        scores = torch.einsum("hd,lhd->hl", q[b].to(work), k) / math.sqrt(q.shape[-1])\n'
    source = (SOLUTIONS / "paged_decode.py").read_text()
    assert source.count(scores) == 1
    path = tmp_path / "paged_decode.py"
    path.write_text(source.replace(scores, '        q[b] *= 1.0 / math.sqrt(q.shape[-1])\n'
                                           '        scores = torch.einsum("hd,lhd->hl", q[b].to(work), k)\n'))
    report = grade_file(path)
    failed = {c.id: c.diagnosis_id for c in report.checks if c.status != "pass"}
    assert failed == {"inputs": "input-modified-in-place"}, failed


@pytest.mark.parametrize("layout", [HALF, INTERLEAVED])
def test_rope_reference_rotates_and_keeps_only_the_offset(layout: str) -> None:
    generator = torch.Generator().manual_seed(0)
    q, k = (torch.randn(1, 1, 1, 8, generator=generator, dtype=torch.float64) for _ in range(2))

    def score(m: int, n: int) -> float:
        rotated_q = reference_rope(q, torch.tensor([m]), 10000.0, layout, 8)
        rotated_k = reference_rope(k, torch.tensor([n]), 10000.0, layout, 8)
        assert torch.allclose(rotated_q.norm(), q.norm())  # a rotation keeps lengths
        return float((rotated_q * rotated_k).sum())

    assert score(7, 3) == pytest.approx(score(1007, 1003), abs=1e-9)
    assert score(7, 3) != pytest.approx(score(3, 7), abs=1e-3)
    assert torch.equal(reference_rope(q, torch.tensor([0]), 10000.0, layout, 8), q)


@pytest.mark.cuda
@pytest.mark.parametrize("name", NEW)
def test_example_solutions_pass_on_cuda(name: str) -> None:
    """Ready for a GPU machine: every check, the backward's memory audit included, on CUDA tensors."""
    from quizprep.grader.grade import GradeOptions, grade

    report = grade(SOLUTIONS / f"{name}.py", GradeOptions(device="cuda"))
    failing = [(c.id, c.message) for c in report.checks if c.status != "pass"]
    assert report.passed and not failing, failing


# One planted bug per exercise: the class table and Exercism's results.json must name it.
CLASS_MUTANTS = {"rope": "rope_offset_ignored", "attention_backward": "attention_backward_no_delta",
                 "paged_decode": "paged_decode_tail_unmasked"}


def hypothesis(name: str, diagnosis: str):
    module = importlib.import_module(f"quizprep.grader.exercises.{name}")
    return next(h for h in module.PROBLEM.hypotheses if h.id == diagnosis)


@pytest.mark.parametrize("name", NEW)
def test_class_mode_writes_exercism_results_for_each_submission(name: str, tmp_path) -> None:
    import json

    from test_exercism import run_cli

    mutant = HERE / "mutants" / f"{CLASS_MUTANTS[name]}.py"
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    (folder / "alice.py").write_text((SOLUTIONS / f"{name}.py").read_text())
    (folder / "bob.py").write_text(mutant.read_text())
    assert run_cli("grade", str(folder), "--exercise", name.replace("_", "-"), "--format", "exercism",
                   "--output-dir", str(out), "--seed", "0") == 0
    alice, bob = (json.loads((out / who / "results.json").read_text()) for who in ("alice", "bob"))
    assert alice["status"] == "pass" and all(test["status"] == "pass" for test in alice["tests"])
    named = hypothesis(name, expectation(mutant)[1])
    failed = [test for test in bob["tests"] if test["status"] == "fail"]
    assert bob["status"] == "fail" and any(named.title in test["message"] for test in failed), failed
