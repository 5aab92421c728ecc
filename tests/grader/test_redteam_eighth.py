"""The eighth red team (2026-11-30, against the seventh's defences; docs/security.md): each attack in
redteam_eighth/, run through the `quizprep grade` command line as an instructor would."""
from __future__ import annotations

import pytest
from test_redteam_third import ATTACKS as THIRD, attack as attack_from, grade_json

from quizprep.grader.source_scan import DYNAMIC, reaches_around

ATTACKS = THIRD.parent / "redteam_eighth"


def attack(name, folder, as_name):
    return attack_from(name, folder, as_name, ATTACKS)


def failed(report: dict) -> dict[str, str]:
    return {c["id"]: c["message"] for c in report["checks"] if c["status"] == "fail"}


@pytest.mark.parametrize("name", ["onnx_attention", "onnx_paged_decode", "onnx_star_sliding_window",
                                  "onnx_escaped_sliding_window", "transform_attrgetter_softmax",
                                  "transform_star_softmax", "host_via_globals_flash_triton"])
def test_names_spelled_in_strings_or_namespaces_are_flagged(name):
    source = (ATTACKS / f"{name}.py.txt").read_text()
    assert DYNAMIC in reaches_around(source, ("flash_attention",)), name


@pytest.mark.slow
@pytest.mark.parametrize("name, exercise, refused", [
    ("onnx_attention", "attention", "torch.onnx.ops._impl.attention_23"),
    ("onnx_paged_decode", "paged_decode", "torch.onnx.ops"),
    ("onnx_star_sliding_window", "sliding_window", "torch.onnx.ops"),
    ("transform_attrgetter_softmax", "softmax", "SoftmaxTransform"),
    ("autograd_tiles_attention_backward", "attention_backward", "torch.autograd"),
    ("func_vjp_attention_backward", "attention_backward", "torch.autograd"),
])
def test_pytorchs_own_attention_softmax_and_autograd_are_refused_however_reached(tmp_path, name, exercise, refused):
    report = grade_json(attack(name, tmp_path, f"{exercise}.py"), exercise)
    messages = failed(report)
    assert not report["passed"] and any(refused in message for message in messages.values()), messages


@pytest.mark.slow
def test_flash_that_tiles_only_at_the_memory_checks_size_fails_every_other_check(tmp_path):
    report = grade_json(attack("size_switch_flash", tmp_path, "flash.py"), "flash")
    named = {c["id"]: c.get("diagnosis_id") for c in report["checks"] if c["status"] == "fail"}
    assert {"shapes", "block-sizes", "causal"} <= set(named), named
    assert set(named.values()) == {"flash-materialised-scores"}, named


@pytest.mark.slow
@pytest.mark.parametrize("name, exercise", [("moduledict_alias_mha", "mha"), ("numpy_ints_budget", "budget"),
                                            ("fraction_decimal_budget", "budget")])
def test_correct_files_it_found_failed_now_pass(tmp_path, name, exercise):
    """Projections registered in an nn.ModuleDict first and aliased as W_q...; byte counts returned
    as np.int64, Fraction or Decimal."""
    report = grade_json(attack(name, tmp_path, f"{exercise}.py"), exercise)
    assert report["passed"], failed(report)
