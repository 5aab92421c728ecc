"""The sixth red team (2026-11-30, kv_cache, paged_decode, rope, sliding_window, masking, replies
and --perf; docs/security.md): each attack in redteam_sixth/, run through the `quizprep grade`
command line as an instructor would."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from test_redteam_third import ATTACKS as THIRD, attack as attack_from, check, class_rows, grade_json

from quizprep.grader.source_scan import META, PRIVATE_TORCH

pytestmark = pytest.mark.slow

ATTACKS = THIRD.parent / "redteam_sixth"


def attack(name, folder, as_name):
    return attack_from(name, folder, as_name, ATTACKS)


def test_inductors_attention_pattern_is_flagged_in_class_mode(tmp_path):
    """torch._inductor's fuse_attention._sfdp_pattern_5 is attention in Python that no guard knows."""
    attack("inductor_pattern_sliding_window", tmp_path / "class", "mallory.py")
    (row,) = class_rows(tmp_path / "class", "sliding_window")
    assert row["read_this"] == [PRIVATE_TORCH], row


def test_a_decode_step_that_remembers_its_inputs_fails_on_a_cache_handed_in(tmp_path):
    """It attends to the decoy prompt it saw before the grader handed in another's cache."""
    report = grade_json(attack("history_not_cache_kv_cache", tmp_path, "kv_cache.py"), "kv_cache")
    handed = check(report, "handed-cache")
    assert handed["status"] == "fail" and handed["diagnosis_id"] == "kv-cache-not-read", handed
    assert handed["diagnosis"].startswith("decode_step does not attend to the cache it is handed"), handed
    assert not report["passed"]


def test_numpy_behind_a_meta_test_fails_the_device_check(tmp_path):
    report = grade_json(attack("meta_detect_sliding_window", tmp_path, "sliding_window.py"), "sliding_window")
    device = check(report, "device")
    assert device["status"] == "fail" and device["diagnosis_id"] == "device-numpy", device
    assert "sliding_window.py:" in device["where"], device


def test_telling_the_meta_inputs_apart_is_flagged_in_class_mode(tmp_path):
    attack("meta_detect_sliding_window", tmp_path / "class", "mallory.py")
    (row,) = class_rows(tmp_path / "class", "sliding_window")
    assert row["read_this"] == [META], row


def test_half_precision_angles_except_at_long_positions_fail_long_context(tmp_path):
    report = grade_json(attack("lowprec_angles_detect_rope", tmp_path, "rope.py"), "rope")
    long_context = check(report, "long-context")
    assert long_context["status"] == "fail" and long_context["diagnosis_id"] == "rope-angles-low-precision", \
        long_context


def test_a_table_of_masks_of_the_checks_sizes_fails(tmp_path):
    report = grade_json(attack("hardcoded_table_masking", tmp_path, "masking.py"), "masking")
    assert check(report, "causal-square")["status"] == "fail" and check(report, "causal-kv-cache")["status"] == "fail"


def test_an_exception_whose_text_raises_is_reported_not_a_dead_worker(tmp_path):
    path = tmp_path / "attention.py"
    path.write_text("class Bad(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\n\n\n"
                    "def scaled_dot_product_attention(q, k, v, mask=None):\n    raise Bad()\n")
    shapes = check(grade_json(path, "attention"), "shapes")
    assert shapes["status"] == "fail" and "Bad whose text could not be read" in shapes["message"], shapes


def test_a_terminal_that_cannot_show_the_reports_symbols_still_gets_the_report(tmp_path):
    solution = THIRD.parent.parent / "solutions" / "softmax.py"
    run = subprocess.run([sys.executable, "-m", "quizprep", "grade", str(solution), "--exercise", "softmax",
                          "--no-record"], capture_output=True, env={**os.environ, "PYTHONIOENCODING": "ascii"},
                         timeout=300)
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-500:]
    assert b"all checks pass" in run.stdout
