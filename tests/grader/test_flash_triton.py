"""The Triton track (issue 23): kernels graded through Triton's interpreter on CPU.

Each mutant is the example solution with one planted bug (triton_kernels.BUGS); each must fail
its check with exactly its name. Correct kernels in other styles pass."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import HERE, SOLUTIONS
from triton_kernels import BUGS, STYLES, KernelEdit

pytest.importorskip("triton")

CORRECT_FILES = [SOLUTIONS / "flash_triton.py", *sorted((HERE / "triton_variants").glob("*.py"))]
STUB = HERE.parents[1] / "exercises" / "flash_triton.py"
KERNEL_BUGS = {"triton-no-rescale", "no-max-shift", "triton-causal-loop-bound", "triton-diagonal-unmasked",
               "triton-ragged-edge", "triton-wrong-strides", "triton-half-dot", "triton-divide-in-loop",
               "triton-wrong-lse", "triton-unwritten-output"}


def _written(edit: KernelEdit, folder: Path) -> Path:
    path = folder / f"flash_triton_{edit.name}.py"
    path.write_text(edit.source())
    return path


def test_catalogue_plants_every_named_kernel_bug():
    assert {bug.diagnosis for bug in BUGS} == KERNEL_BUGS


@pytest.mark.parametrize("bug", BUGS, ids=[bug.name for bug in BUGS])
def test_kernel_mutant_fails_with_its_one_name(bug: KernelEdit, grade_kernel, tmp_path):
    report = grade_kernel(_written(bug, tmp_path), only=(bug.check,))
    result = next(c for c in report.checks if c.id == bug.check)
    assert result.status == "fail", result.message
    assert result.diagnosis_id == bug.diagnosis, f"{result.diagnosis!r}\n{result.where}"
    assert result.hint and result.quiz


def test_divide_in_loop_is_named_where_causal_tiles_stop_at_the_diagonal(grade_kernel, tmp_path):
    """Each query tile stops after its diagonal block, so its earlier rows are divided fewer times
    than a replay over every key block would say (it once fell through to `some-rows-wrong`)."""
    bug = next(bug for bug in BUGS if bug.name == "divide_in_loop")
    report = grade_kernel(_written(bug, tmp_path), only=("float16",))
    assert report.checks[-1].diagnosis_id == "triton-divide-in-loop", report.checks[-1].message


@pytest.mark.parametrize("style", STYLES, ids=[style.name for style in STYLES])
def test_correct_kernels_in_other_styles_pass(style: KernelEdit, grade_kernel, tmp_path):
    report = grade_kernel(_written(style, tmp_path))
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status != "pass"]


@pytest.mark.parametrize("path", CORRECT_FILES, ids=[p.stem for p in CORRECT_FILES])
def test_example_and_descriptor_kernels_pass(path: Path, grade_kernel):
    report = grade_kernel(path)
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status != "pass"]


def test_untouched_stub_says_what_to_do(grade_kernel):
    import io

    from rich.console import Console

    from quizprep.grader.report import render

    report = grade_kernel(STUB)
    console = Console(file=io.StringIO(), width=100, color_system=None)
    render(report, console)
    text = console.file.getvalue()
    assert "Not started yet" in text and "flash_triton.py:" in text and "raise NotImplementedError" in text
    assert not report.passed


def test_without_triton_the_grade_says_how_to_get_it(tmp_path):
    """The import failing as it does where Triton is not installed (the worker can read no stand-in
    package outside Python's installation, so the submission raises what `import triton` would)."""
    from quizprep.grader.grade import GradeOptions, grade
    from quizprep.grader.worker_session import Limits

    missing = "raise ModuleNotFoundError(\"No module named 'triton'\", name='triton')\n"
    path = tmp_path / "flash_triton.py"
    path.write_text(missing + (SOLUTIONS / "flash_triton.py").read_text())
    report = grade(path, GradeOptions(limits=Limits(check_seconds=60)))
    load = report.checks[0]
    assert load.status == "fail" and "No module named 'triton'" in load.message
    assert "pip install 'quizprep[triton]'" in load.hint


@pytest.mark.cuda
def test_compiled_kernel_passes_on_a_gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA: the compiled path")
    from quizprep.grader.grade import GradeOptions, grade

    report = grade(SOLUTIONS / "flash_triton.py", GradeOptions(device="cuda"))
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status != "pass"]
    assert report.environment["sandbox"]["ptxas"].startswith("through a broker")  # compiled, not interpreted


def test_perf_phase_is_skipped_with_its_reason_when_interpreted():
    from types import SimpleNamespace

    from quizprep.grader.exercises.flash_triton import perf_on_gpu

    (row,) = perf_on_gpu(SimpleNamespace(device="cpu")).checks
    assert (row.id, row.status) == ("perf", "skip") and "CUDA GPU only" in row.message


@pytest.mark.cuda
def test_perf_phase_times_the_kernel_against_sdpa_on_a_gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA: the perf phase")
    from quizprep.grader.grade import GradeOptions, grade

    report = grade(SOLUTIONS / "flash_triton.py", GradeOptions(device="cuda", perf=True))
    rows = {c.id: c for c in report.checks}
    assert rows["perf"].status == "pass" and rows["perf-recheck"].status == "pass", rows["perf"].message


GPU_TILE_M, GPU_TILE_N = 128, 64  # the example's compiled tiles (tests/solutions/flash_triton.py)


def _differs(got, want) -> bool:
    import torch

    return not torch.allclose(got["out"], want["out"], atol=1e-9)


@pytest.mark.parametrize("check", ["forward", "causal", "float16"])
def test_compiled_lengths_show_the_tile_bugs_at_gpu_tiles(check):
    """On an H200 three mutants passed when the checks used the interpreted lengths (n = 37, 45):
    one 64-key block held every key, so nothing needed rescaling and no loop bound was crossed.
    At the compiled lengths each of those bugs changes the output with the example's GPU tiles."""
    from quizprep.grader.exercises import _kernel_sim as sim
    from quizprep.grader.exercises.flash_triton import LENGTHS, PROBLEM

    interpreted, compiled = LENGTHS[check]
    for n, shows in ((interpreted[0], False), (compiled[0], True)):
        case = PROBLEM.build({"batch": 1, "heads": 2, "n": n, "d": 64}, {"causal": check != "forward"}, 7)
        q, k, v = case.data["q"].double(), case.data["k"].double(), case.data["v"].double()
        allowed = sim.causal_allowed(n) if case.data["causal"] else None
        exact = sim.exact(q, k, v, allowed)
        bugs = [sim.online(q, k, v, allowed, GPU_TILE_N, rescale_acc=False),
                sim.online(q, k, v, allowed, GPU_TILE_N, divide_in_loop=True, block_m=GPU_TILE_M)]
        if allowed is not None:
            bugs.append(sim.exact(q, k, v, sim.block_rule_allowed(n, GPU_TILE_M, GPU_TILE_N, "one past")))
        assert [_differs(bug, exact) for bug in bugs] == [shows] * len(bugs), (check, n)
