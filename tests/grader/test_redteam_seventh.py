"""The seventh red team (2026-11-30, against the sixth's defences; docs/security.md): each attack in
redteam_seventh/, run through the `quizprep grade` command line as an instructor would."""
from __future__ import annotations

import pytest
from test_redteam_third import ATTACKS as THIRD, attack as attack_from, check, class_rows, grade_json

from quizprep.grader.source_scan import META, OWN_ATTENTION

pytestmark = pytest.mark.slow

ATTACKS = THIRD.parent / "redteam_seventh"


def attack(name, folder, as_name):
    return attack_from(name, folder, as_name, ATTACKS)


@pytest.mark.parametrize("name, exercise, check_id", [
    ("numpy_pool_flash", "flash", "memory"),
    ("numpy_pool_attention_backward", "attention_backward", "memory"),
])
def test_scores_in_numpy_buffers_from_import_fail_the_memory_and_device_checks(tmp_path, name, exercise, check_id):
    report = grade_json(attack(name, tmp_path, f"{exercise}.py"), exercise)
    memory = check(report, check_id)
    assert memory["status"] == "fail" and "read tensors out of torch" in memory["message"], memory
    assert check(report, "device")["diagnosis_id"] == "device-numpy"


@pytest.mark.parametrize("name", ["tree_online_softmax", "pool_online_softmax", "fft_online_softmax",
                                  "lp_pool_online_softmax", "tolist_online_softmax", "detect_online_softmax"])
def test_whole_rows_by_pools_transforms_python_or_a_fixed_size_fail_one_pass(tmp_path, name):
    one_pass = check(grade_json(attack(name, tmp_path, "online_softmax.py"), "online_softmax"), "one-pass")
    assert one_pass["status"] == "fail" and one_pass["diagnosis_id"] == "online-whole-row", one_pass


@pytest.mark.parametrize("name, exercise", [("catmax_correct_online_softmax", "online_softmax"),
                                            ("set_num_threads_correct_flash", "flash")])
def test_correct_files_it_found_failed_now_pass(tmp_path, name, exercise):
    """A running max folded together with the chunk (chunk_size + 1 values), and torch.set_num_threads(4)
    at import (three idle OpenMP threads)."""
    report = grade_json(attack(name, tmp_path, f"{exercise}.py"), exercise)
    assert report["passed"], [(c["id"], c["message"]) for c in report["checks"] if c["status"] != "pass"]


@pytest.mark.parametrize("name, exercise", [("onnx_sliding_window", "sliding_window"),
                                            ("transform_softmax", "softmax")])
def test_pytorchs_own_attention_and_softmax_are_flagged_in_class_mode(tmp_path, name, exercise):
    attack(name, tmp_path / "class", "mallory.py")
    (row,) = class_rows(tmp_path / "class", exercise)
    assert OWN_ATTENTION in row["read_this"], row


@pytest.mark.parametrize("name, diagnosis", [("raise_off_cpu_attention", "device-refused"),
                                             ("assert_cpu_attention", "device-refused")])
def test_code_that_refuses_other_devices_fails_the_device_check(tmp_path, name, diagnosis):
    device = check(grade_json(attack(name, tmp_path, "attention.py"), "attention"), "device")
    assert device["status"] == "fail" and device["diagnosis_id"] == diagnosis, device


@pytest.mark.parametrize("name, diagnosis", [("dlpack_sliding_window", "device-numpy"),
                                             ("tolist_sliding_window", "device-host-values")])
def test_numpy_by_dlpack_or_tolist_fails_the_device_check(tmp_path, name, diagnosis):
    device = check(grade_json(attack(name, tmp_path, "sliding_window.py"), "sliding_window"), "device")
    assert device["status"] == "fail" and device["diagnosis_id"] == diagnosis, device


def test_a_cpu_only_path_chosen_by_a_caught_error_is_flagged_in_class_mode(tmp_path):
    """Without a GPU the probe's meta inputs take the file's other path: flagged, not failed."""
    attack("cpumask_sliding_window", tmp_path / "class", "mallory.py")
    (row,) = class_rows(tmp_path / "class", "sliding_window")
    assert row["read_this"] == [META], row


def test_a_fixed_mask_table_fails_the_drawn_sizes(tmp_path):
    report = grade_json(attack("fixed_table_sliding_window", tmp_path, "sliding_window.py"), "sliding_window")
    assert check(report, "mask")["status"] == "fail" and check(report, "mask-cache")["status"] == "fail"
