"""The fourth red team (2026-11-30; docs/security.md): each attack in redteam_fourth/, run through
the `quizprep grade` command line as an instructor would, asserting that it is contained."""
from __future__ import annotations

import pytest
from test_redteam_third import ATTACKS as THIRD, attack as attack_from, check, class_rows, grade_json

from quizprep.grader.jail import launch
from quizprep.grader.source_scan import META

pytestmark = pytest.mark.slow

ATTACKS = THIRD.parent / "redteam_fourth"
THREADS = "threads (the grader's audits watch only the calling thread)"


def attack(name, folder, as_name):
    return attack_from(name, folder, as_name, ATTACKS)


@pytest.mark.parametrize("jail", ["on", "off"])
def test_scores_computed_in_a_thread_started_by_the_call_fail_the_memory_check(tmp_path, monkeypatch, jail):
    """The worker's process CPU clock counts every thread, joined before the call returns or not,
    jailed or not, root or not."""
    if jail == "on" and launch.refused():
        pytest.skip(f"the kernel refuses the jail's namespaces: {launch.refused()}")
    monkeypatch.setenv("QUIZPREP_JAIL", jail)
    report = grade_json(attack("thread_prealloc_flash", tmp_path, "flash.py"), "flash")
    memory = check(report, "memory")
    assert memory["status"] == "fail" and "other threads of your file used" in memory["message"], memory


def test_scores_computed_in_a_thread_started_at_import_fail_the_memory_check(tmp_path):
    """A thread running when the call begins is counted with or without the jail."""
    report = grade_json(attack("thread_pool_flash", tmp_path, "flash.py"), "flash")
    memory = check(report, "memory")
    assert memory["status"] == "fail" and "1 other thread of your file was running" in memory["message"], memory


def test_threads_are_flagged_in_class_mode(tmp_path):
    attack("thread_prealloc_flash", tmp_path / "class", "mallory.py")
    (row,) = class_rows(tmp_path / "class", "flash")
    assert row["read_this"] == [THREADS, META], row  # and its `except BaseException` in the thread


def test_a_module_run_again_through_its_loader_is_flagged_in_class_mode(tmp_path):
    attack("quantmha_loader_attention", tmp_path / "class", "mallory.py")
    (row,) = class_rows(tmp_path / "class", "attention")
    assert row["read_this"] == ["modules run again from their source (__loader__, exec_module)"], row


def test_host_arithmetic_without_matmul_is_flagged_on_the_triton_track(tmp_path):
    pytest.importorskip("triton")
    attack("broadcast_copy_flash_triton", tmp_path / "class", "mallory.py")
    (row,) = class_rows(tmp_path / "class", "flash_triton")
    assert row["read_this"] == ["attention arithmetic in the host code (the kernels should compute it)"], row
