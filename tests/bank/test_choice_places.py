"""Choices are shuffled for each showing, so a bank may not point at a choice by its place
unless it keeps the written order with `shuffle: false`."""
from __future__ import annotations

from pathlib import Path

import pytest

from quizprep.bank import load_banks

BANK = """\
topic: t
title: T
questions:
  - id: q-place
    kind: choice
    difficulty: 1
    tags: [a]
    prompt: Pick.
    explanation: {explanation}
    references: [ref]
{shuffle}    choices:
      - text: one
        why: wrong
      - text: two
        why: wrong
      - text: {last}
        correct: true
        why: right
"""


def load(tmp_path: Path, *, explanation: str = "Because.", last: str = "three", shuffle: str = ""):
    path = tmp_path / "bank.yaml"
    path.write_text(BANK.format(explanation=explanation, last=last, shuffle=shuffle))
    return load_banks([path])


@pytest.mark.parametrize(("explanation", "last", "named"), [
    ("Because.", "All of the above", "All of the above"),
    ("Because.", "Both of the above", "Both of the above"),
    ("See the last choice.", "three", "last choice"),
    ("Because.", "Options 1 and 2", "Options 1 and 2"),
])
def test_a_choice_named_by_its_place_needs_the_written_order(tmp_path, explanation, last, named):
    result = load(tmp_path, explanation=explanation, last=last)
    (error,) = result.errors
    assert (error.id, error.line) == ("q-place", 11)  # the choices
    assert repr(named) in error.message and "shuffle: false" in error.message
    assert result.questions == []


def test_shuffle_false_keeps_the_order_and_allows_places(tmp_path):
    result = load(tmp_path, last="All of the above", shuffle="    shuffle: false\n")
    assert not result.errors and result.questions[0].shuffle is False


def test_shuffle_is_true_unless_a_bank_says_otherwise(tmp_path):
    (question,) = load(tmp_path).questions
    assert question.shuffle is True


def test_shuffle_must_be_a_boolean(tmp_path):
    (error,) = load(tmp_path, shuffle="    shuffle: sometimes\n").errors
    assert error.line == 11 and "'shuffle' must be true or false" in error.message
