"""The new exercises' checks separate the mistakes they test, as test_separation.py proves for
the textbook ones: within each check, no two hypotheses predict the same outputs on every case,
so a failure gets one name."""
from __future__ import annotations

import itertools

import pytest

from conftest import SOLUTIONS

from quizprep.grader.exercises import flash, kv_cache, online_softmax, sliding_window
from quizprep.grader.problem import Case, differs_from_reference, matches

MODULES = {"flash": flash, "online_softmax": online_softmax, "kv_cache": kv_cache, "sliding_window": sliding_window}


def _cases_per_check(name: str, grade_file, monkeypatch) -> dict[str, list[Case]]:
    module = MODULES[name]
    original = module.build
    recorded: list[Case] = []

    def recording(sizes, variant, seed):
        case = original(sizes, variant, seed)
        recorded.append(case)
        return case

    monkeypatch.setattr(module, "build", recording)
    monkeypatch.setattr(type(module.PROBLEM), "build", staticmethod(recording))
    per_check = {}
    for check in module.SPEC.checks:
        recorded.clear()
        report = grade_file(SOLUTIONS / f"{name}.py", only=(check.id,), exercise=name)
        assert report.passed, [(c.id, c.message) for c in report.checks]
        per_check[check.id] = list(recorded)
    return per_check


def _differing(hypothesis, case: Case) -> list:
    return [form for form in hypothesis.forms(case) if differs_from_reference(case, hypothesis, form)]


def _separated(a, b, cases: list[Case]) -> bool:
    for case in cases:
        forms_a, forms_b = _differing(a, case), _differing(b, case)
        if forms_a and forms_b and not any(matches(case, fa, b, fb) for fa in forms_a for fb in forms_b):
            return True
    return False


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_check_separates_the_hypotheses_it_can_see(name, grade_file, monkeypatch):
    per_check = _cases_per_check(name, grade_file, monkeypatch)
    confused = []
    for check_id, cases in per_check.items():
        seen = [h for h in MODULES[name].PROBLEM.hypotheses if any(_differing(h, case) for case in cases)]
        assert all(not _separated(h, h, cases) for h in seen)  # the criterion can fail: a mistake is itself
        confused += [(check_id, a.id, b.id) for a, b in itertools.combinations(seen, 2) if not _separated(a, b, cases)]
    assert not confused
