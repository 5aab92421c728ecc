"""The Triton track on issue 31's second held-out set (tests/grader/triton_heldout2_kernels.py):
kernels adapted from sources the first set did not use, each slip failing its check with exactly
its one name and pointing at the learner's own line, the correct kernels passing, and a kernel
that is written but never launched refused."""
from __future__ import annotations

from pathlib import Path

import pytest

import triton_heldout2_kernels as heldout2
import triton_heldout_kernels as heldout1
import triton_kernels as catalogue
from triton_kernels import KernelEdit, fails_with_its_name

EVERY_SLIP = [bug for bug in heldout2.BUGS + heldout1.BUGS + catalogue.BUGS if bug.edits]
# where the slip's own line is the line that should change (a removed line, a launch argument or a
# value converted elsewhere is pointed at the line that should carry the fix instead)
ON_THE_EDITED_LINE = {
    "fa1_no_scale", "fa1_causal_strict", "fa1_grid_swapped", "fa1_unmasked_store", "fa1_lse_ignores_batch",
    "fa1_max_init_zero", "fa1_sum_not_rescaled", "fa1_causal_stops_early", "fa1_k_other_inf",
    "gems_log2e_with_exp", "gems_off_band_one_past", "gems_strides_crossed", "gems_sum_not_rescaled",
    "gems_grid_swapped", "kernels_rows_through_q_strides", "kernels_lse_ignores_batch", "kernels_exp2_no_log2e",
    "kernels_causal_strict", "kernels_acc_not_rescaled", "kernels_unmasked_store", "kernels_no_scale",
    "dao_no_scale", "dao_causal_strict", "dao_grid_swapped", "dao_lse_ignores_batch", "dao_k_other_inf",
    "flag_strides_crossed", "flag_one_set_of_strides", "flag_exp2_no_log2e", "flag_sum_not_rescaled",
    "flag_max_init_zero",
    "tutorial_off_band_one_past", "tutorial_log2e_with_exp", "tutorial_no_scale", "no_rescale",
    "causal_stops_early", "causal_one_past", "contiguous_strides", "half_dot", "divide_in_loop", "wrong_lse",
}


@pytest.mark.parametrize("bug", EVERY_SLIP, ids=[bug.name for bug in EVERY_SLIP])
def test_a_named_slip_points_at_a_line_of_the_learners_file(bug: KernelEdit, tmp_path):
    from quizprep.grader.kernel_lines import learner_line

    path = tmp_path / "mine.py"
    path.write_text(bug.source())
    found = learner_line(path, bug.diagnosis)
    assert found is not None, bug.name
    line, text = found
    assert text == bug.source().splitlines()[line - 1].strip()
    if bug.name in ON_THE_EDITED_LINE:
        assert line == bug.line()[0], (found, bug.line())


def test_a_file_reading_one_tensor_through_anothers_strides_is_named_for_it(tmp_path):
    from quizprep.grader.exercises._kernel_words import in_kernel_words
    from quizprep.grader.spec import CheckFailure, Diagnosis

    bug = next(bug for bug in heldout2.BUGS if bug.name == "kernels_rows_through_q_strides")
    path = tmp_path / "mine.py"
    path.write_text(bug.source())
    heads = CheckFailure("out differs", diagnosis_id="some-heads-wrong", hint="the slice of features")
    in_kernel_words(heads, Diagnosis("triton-wrong-strides", "wrong strides", "use each tensor's own", ""), path)
    assert heads.diagnosis_id == "triton-wrong-strides"
    path.write_text(heldout2.KERNELS.read_text())
    rows = CheckFailure("out differs", diagnosis_id="some-heads-wrong", hint="the slice of features")
    in_kernel_words(rows, Diagnosis("triton-wrong-strides", "wrong strides", "use each tensor's own", ""), path)
    assert rows.diagnosis_id == "some-heads-wrong"


STRAY_LOAD = ("raised IndexError: a masked tl.load reads outside every tensor passed to the kernel: 16 of 64 "
              "addresses (program (2, 1, 0) of grid (3, 2, 1); tensors (1, 2, 37, 64), (1, 2, 37, 64))")


@pytest.mark.parametrize("name, named", [("gems_strides_crossed", "triton-wrong-strides"),
                                         ("gems_key_mask_not_advanced", "triton-ragged-edge")])
def test_a_stray_load_is_named_from_the_learners_own_file(name, named, tmp_path):
    from quizprep.grader.crashes import crash_diagnosis
    from quizprep.grader.output import Frame

    bug = next(bug for bug in heldout2.BUGS if bug.name == name)
    path = tmp_path / "mine.py"
    path.write_text(bug.source())
    launch = next(i for i, line in enumerate(bug.source().splitlines(), 1) if "_attn_fwd[grid](" in line)
    # interpreted, the innermost frame of the learner's file is the launch, not the load
    frames = [Frame(str(path), launch, "flash_attention", "_attn_fwd[grid](")]
    assert crash_diagnosis(STRAY_LOAD, frames, source=path).id == named
    # a frame's file name comes from the learner's process: another file than the grader's own is never read
    assert crash_diagnosis(STRAY_LOAD, frames, source=tmp_path / "other.py").id == "triton-out-of-bounds"


CORRECT_KERNELS = [*heldout2.CORRECT, *heldout1.CORRECT, catalogue.SOLUTION,
                   *sorted((Path(__file__).parent / "triton_variants").glob("*.py"))]


@pytest.mark.parametrize("path", CORRECT_KERNELS, ids=[path.stem for path in CORRECT_KERNELS])
def test_no_correct_kernel_is_taken_for_a_stray_pointer(path: Path):
    from quizprep.grader.kernel_lines import crossed_strides_line, stale_mask

    assert crossed_strides_line(path) is None
    assert not stale_mask(path, 0)


def test_a_file_that_does_not_parse_points_nowhere(tmp_path):
    from quizprep.grader.kernel_lines import learner_line

    path = tmp_path / "broken.py"
    path.write_text("def flash_attention(q, k, v:\n")
    assert learner_line(path, "triton-no-scale") is None


def test_a_kernel_reached_through_a_link_is_not_read_for_its_lines(tmp_path):
    from quizprep.grader.kernel_lines import crossed_strides_line

    bug = next(bug for bug in heldout2.BUGS if bug.name == "kernels_rows_through_q_strides")
    (tmp_path / "elsewhere.py").write_text(bug.source())
    assert crossed_strides_line(tmp_path / "elsewhere.py") is not None
    (tmp_path / "mine.py").symlink_to(tmp_path / "elsewhere.py")
    assert crossed_strides_line(tmp_path / "mine.py") is None  # read as every learner source is: no link followed


def test_general_names_are_said_in_a_kernels_words():
    from quizprep.grader.exercises._kernel_words import in_kernel_words
    from quizprep.grader.invariants import nondeterminism
    from quizprep.grader.spec import CheckFailure, Diagnosis

    strides = Diagnosis("triton-wrong-strides", "wrong strides", "use each tensor's own", "")
    random = CheckFailure("out differs", named=nondeterminism())
    in_kernel_words(random, strides)
    assert random.diagnosis_id == "triton-nondeterministic" and "dropout" not in random.diagnosis + random.hint
    rows = CheckFailure("out differs", diagnosis_id="some-rows-wrong", hint="how the mask lines up with them")
    in_kernel_words(rows, strides)
    assert "mask lines up" not in rows.hint and "query tile" in rows.hint


pytest.importorskip("triton")
ONE_EACH = {bug.diagnosis: bug for bug in heldout2.BUGS}  # the last of each name: the interpreter is slow


@pytest.mark.parametrize("bug", ONE_EACH.values(), ids=list(ONE_EACH))
def test_heldout2_slip_fails_with_its_one_name(bug: KernelEdit, grade_kernel, tmp_path):
    fails_with_its_name(grade_kernel, bug, tmp_path)


def test_a_named_kernel_bug_quotes_the_learners_file_and_line(grade_kernel, tmp_path):
    bug = next(bug for bug in heldout2.BUGS if bug.name == "fa1_causal_strict")
    path = tmp_path / "my_flash.py"
    path.write_text(bug.source())
    result = next(c for c in grade_kernel(path, only=("causal",)).checks if c.id == "causal")
    line, text = bug.line()
    assert f"my_flash.py:{line}: {text}" in result.where


@pytest.mark.parametrize("path", heldout2.CORRECT, ids=[path.stem for path in heldout2.CORRECT])
def test_kernels_adapted_from_public_code_pass(path: Path, grade_kernel):
    report = grade_kernel(path)
    assert report.passed, [(c.id, c.message, c.diagnosis) for c in report.checks if c.status != "pass"]
