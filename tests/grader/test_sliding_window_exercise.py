"""The sliding-window brute force agrees with the budget's pair count and with causal_mask."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from quizprep import budget  # noqa: E402
from quizprep.grader import reference  # noqa: E402
from quizprep.grader.exercises.sliding_window import brute_force_mask  # noqa: E402


@pytest.mark.parametrize("n, m, window", [(6, 6, 3), (7, 7, 1), (3, 10, 4), (5, 12, 12), (9, 9, 20)])
def test_pairs_match_the_budget_count(n: int, m: int, window: int) -> None:
    assert int(brute_force_mask(n, m, window).sum()) == budget.attended_pairs(n, m, True, window)


def test_a_window_as_long_as_the_keys_is_the_causal_mask() -> None:
    assert torch.equal(brute_force_mask(4, 9, 9), reference.causal_mask(4, 9))


def test_each_misreading_differs_from_the_contract() -> None:
    contract = brute_force_mask(3, 10, 4)
    for rule in ("wide", "narrow", "two-sided", "no offset", "no self"):
        assert not torch.equal(brute_force_mask(3, 10, 4, rule), contract), rule
