"""The Triton track on issue 31's held-out kernels (tests/grader/triton_heldout_kernels.py): kernels
adapted from public code, each slip failing its check with exactly its one name, and a
flash_attention that launches no kernel refused."""
from __future__ import annotations


import pytest

from triton_heldout_kernels import BUGS, CORRECT
from triton_kernels import KernelEdit, fails_with_its_name

pytest.importorskip("triton")

NAMED_HERE = {"triton-no-scale", "triton-exp2-no-log2e", "triton-log2e-with-exp", "triton-sum-not-rescaled",
              "triton-causal-strict", "triton-k-other-inf", "triton-max-init-zero", "triton-lse-batch",
              "triton-wrong-strides", "triton-causal-loop-bound", "triton-no-launch", "triton-unmasked-store",
              "triton-grid-swapped"}
# one slip per name: the interpreter is slow, so the other files of a name run in the benchmark
ONE_EACH = {bug.diagnosis: bug for bug in BUGS if bug.diagnosis in NAMED_HERE}  # the last of each name


@pytest.mark.parametrize("bug", ONE_EACH.values(), ids=list(ONE_EACH))
def test_heldout_slip_fails_with_its_one_name(bug: KernelEdit, grade_kernel, tmp_path):
    fails_with_its_name(grade_kernel, bug, tmp_path)


def test_every_new_name_has_a_heldout_slip():
    assert set(ONE_EACH) == NAMED_HERE


def test_a_kernel_adapted_from_public_code_passes_the_layouts_check(grade_kernel):
    """Dao's kernel assumes a unit feature stride and its wrapper makes such inputs contiguous: each
    of q, k and v arrives in another layout, and all three are read right."""
    report = grade_kernel(CORRECT[0], only=("strides",))
    assert report.passed, [(c.id, c.message) for c in report.checks if c.status != "pass"]


def test_a_block_pointer_crash_is_named_for_what_it_is():
    from quizprep.grader.crashes import crash_diagnosis

    message = ("InterpreterError: NotImplementedError('Block pointers have been removed in favor of the tensor "
               "descriptor API')")
    found = crash_diagnosis(message, [])
    assert found is not None and found.id == "triton-block-ptr" and "make_tensor_descriptor" in found.hint


def test_smallest_case_shows_the_output_that_differs_and_not_the_one_that_matches():
    from quizprep.grader.exercises.flash_triton import PROBLEM
    from quizprep.grader.small_case import describe_small

    case = PROBLEM.build({"batch": 1, "heads": 1, "n": 5, "d": 64}, {}, 3)
    out = case.expected["out"].clone()
    out[0, 0, 2, 7] += 1.0
    text = describe_small(case, {"out": out, "lse": case.expected["lse"].clone()})
    assert "out[0, 0, 2, 7] expected" in text and "the first of 1 of 320 elements" in text
    assert not any(line.lstrip().startswith("lse") for line in text.splitlines())
