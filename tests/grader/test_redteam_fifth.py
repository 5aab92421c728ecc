"""The fifth red team (2026-11-30, the exercises the others left; docs/security.md): each attack in
redteam_fifth/, run through the `quizprep grade` command line as an instructor would."""
from __future__ import annotations

import re

import pytest
from test_redteam_third import ATTACKS as THIRD, attack as attack_from, check, class_rows, grade_json

pytestmark = pytest.mark.slow

ATTACKS = THIRD.parent / "redteam_fifth"


def attack(name, folder, as_name):
    return attack_from(name, folder, as_name, ATTACKS)


def test_autograd_behind_a_rolled_back_audit_fails_the_backward_memory_check(tmp_path):
    """The audit's counters restored around torch.autograd.grad: the autograd guard (eighth red team)
    refuses the engine before any audit is read, at the memory check as at every other. (The grader's
    own reading of the process's growth, which caught it before, is tested in test_memory_from_outside.)"""
    report = grade_json(attack("backward_autograd_audit_cond", tmp_path, "attention_backward.py"),
                        "attention_backward")
    memory = check(report, "memory")
    assert memory["status"] == "fail" and "uses torch.autograd" in memory["message"], memory
    assert not report["passed"]


def test_reaching_the_dispatch_mode_through_higher_order_ops_is_flagged_in_class_mode(tmp_path):
    attack("backward_autograd_audit_cond", tmp_path / "class", "mallory.py")
    (row,) = class_rows(tmp_path / "class", "attention_backward")
    # vars() on the mode is a name looked up at run time too
    assert row["read_this"][0] == "dispatch modes (torch.utils._python_dispatch)", row
    assert row["read_this"][1].startswith("names looked up at run time"), row


def test_a_softmax_from_logsumexp_that_ignores_the_chunks_fails_one_pass_by_name(tmp_path):
    """Right values from one logsumexp over the row: the audit's widest fold (the whole row, of a width
    drawn per grade) fails the one-pass check, and the line is the one that never reads chunk_size."""
    report = grade_json(attack("online_lse", tmp_path, "online_softmax.py"), "online_softmax")
    one_pass = check(report, "one-pass")
    assert one_pass["status"] == "fail" and re.search(r"logsumexp folds \d+ values", one_pass["message"]), one_pass
    assert one_pass["diagnosis_id"] == "online-whole-row", one_pass
    assert "never reads chunk_size" in one_pass["where"], one_pass
    assert not report["passed"]
