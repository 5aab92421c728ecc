"""Dropout that drops nothing on a small case, twice in a row, is still told from a deterministic
slip: the suite once saw minGPT's F.dropout (p = 0.1) named 'weights-not-normalised' on the shapes
check, whose first call and one re-run both kept every weight."""
from __future__ import annotations

from types import SimpleNamespace

import torch

from quizprep.grader import invariants


class Replays:
    """A learner's outputs, call after call."""

    def __init__(self, outputs: list[dict[str, torch.Tensor]]) -> None:
        self.outputs = iter(outputs)

    def run(self, ctx, case, options):
        return next(self.outputs)


class Context(SimpleNamespace):
    def reseeded(self, salt: int) -> Context:
        return self


def diagnosis(first: dict[str, torch.Tensor], later: list[dict[str, torch.Tensor]]):
    return invariants._dropout(Context(), Replays(later), SimpleNamespace(), first, None)


def test_randomness_seen_only_in_a_later_call_is_named_dropout():
    kept_all = {"out": torch.ones(2, 3) / 0.9}
    dropped = {"out": torch.tensor([[0.0, 1.0, 1.0], [1.0, 1.0, 1.0]]) / 0.9}
    found = diagnosis(kept_all, [dict(kept_all), dict(kept_all), dropped])
    assert found is not None and found.id == "dropout-active"


def test_a_slip_that_returns_the_same_values_every_call_is_not_dropout():
    scaled = {"out": torch.ones(2, 3) / 0.9}
    assert diagnosis(scaled, [dict(scaled) for _ in range(invariants.RERUNS_FOR_RANDOMNESS)]) is None
