"""The sizes each check draws separate the mistakes it tests: no two hypotheses predict the same
outputs on every case of a check (d_head ≠ √d_model, n ≠ d_head ≠ m), so a failure gets one name.
Every exercise whose checks diagnose with hypotheses is covered."""
from __future__ import annotations

import dataclasses
import itertools
import pytest
import torch

from conftest import HERE, SOLUTIONS

from quizprep.grader.context import CheckContext
from quizprep.grader.exercises import (
    attention, attention_backward, flash, gqa, kv_cache, mha, online_softmax, paged_decode, rope, sliding_window,
)
from quizprep.grader.problem import Case, candidates, diagnose, differs_from_reference, matches

MODULES = {module.SPEC.name.replace("-", "_"): module
           for module in (attention, mha, gqa, flash, online_softmax, kv_cache, sliding_window, rope,
                          attention_backward, paged_decode)}


def _cases_per_check(name: str, grade_file, monkeypatch) -> dict[str, list[Case]]:
    module = MODULES[name]
    original = module.build
    recorded: list[Case] = []

    def recording(sizes, variant, seed):
        case = original(sizes, variant, seed)
        recorded.append(case)
        return case

    monkeypatch.setattr(module, "build", recording)
    monkeypatch.setattr(module, "PROBLEM", dataclasses.replace(module.PROBLEM, build=recording))
    per_check = {}
    for check in module.SPEC.checks:
        recorded.clear()
        report = grade_file(SOLUTIONS / f"{name}.py", only=(check.id,), exercise=name)
        assert report.passed, [(c.id, c.message) for c in report.checks]
        per_check[check.id] = list(recorded)
    return per_check


def _differing_forms(hypothesis, case: Case) -> list:
    return [form for form in hypothesis.forms(case) if differs_from_reference(case, hypothesis, form)]


def _separated(a, b, cases: list[Case]) -> bool:
    """Some case where both mistakes show and no form of one looks like a form of the other; or no
    case where both show (dV without its transpose needs n = m, a causal offset's sign n ≠ m): a
    failing case is named from its own outputs, where only one of them predicts a difference."""
    shown_together = False
    for case in cases:
        forms_a, forms_b = _differing_forms(a, case), _differing_forms(b, case)
        if forms_a and forms_b:
            shown_together = True
            if not any(matches(case, fa, b, fb) for fa in forms_a for fb in forms_b):
                return True
    return not shown_together


def _applies(hypothesis, cases: list[Case]) -> bool:
    return any(_differing_forms(hypothesis, case) for case in cases)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_check_separates_the_hypotheses_it_can_see(name, grade_file, monkeypatch):
    per_check = _cases_per_check(name, grade_file, monkeypatch)
    hypotheses = MODULES[name].PROBLEM.hypotheses
    confused = []
    for check_id, cases in per_check.items():
        seen = [h for h in hypotheses if _applies(h, cases)]
        assert all(not _separated(h, h, cases) for h in seen)  # the criterion can fail: a mistake is itself
        confused += [(check_id, a.id, b.id) for a, b in itertools.combinations(seen, 2) if not _separated(a, b, cases)]
    assert not confused


@pytest.mark.parametrize("name, check_ids", [("attention", ("values", "mask-causal", "mask-padding")),
                                             ("mha", ("self-attention", "cross-attention", "masks")),
                                             ("gqa", ("grouped", "causal"))])
def test_value_checks_see_every_scale_mistake(name, check_ids, grade_file, monkeypatch):
    """d_k read from the wrong place fails the plain value checks instead of slipping through."""
    per_check = _cases_per_check(name, grade_file, monkeypatch)
    scale_ids = {"no-scale", "scale-dk", "scale-dv", "scale-d-model", "scale-seq-len"}
    for check_id in check_ids:
        for hypothesis in (h for h in MODULES[name].PROBLEM.hypotheses if h.id in scale_ids):
            assert _applies(hypothesis, per_check[check_id]), (check_id, hypothesis.id)


def test_coinciding_hypotheses_are_told_apart_on_other_sizes(grade_file, shared_worker):
    """With one query, dividing by √n and not dividing at all give the same outputs; the grader
    runs the learner on other sizes and names only the mistake that is really there."""
    grade_file(HERE / "production" / "attention_dk_from_length.py", only=("values",))
    ctx = CheckContext(shared_worker)
    case = attention.build(attention.case_sizes((3,), 1, 6, 8, 5), {"dtype": torch.float64}, 0)
    actual = attention.run(ctx, case)
    assert {h.id for h in candidates(attention.PROBLEM, case, actual)} == {"no-scale", "scale-seq-len"}
    assert diagnose(attention.PROBLEM, case, actual, ctx).id == "scale-seq-len"
