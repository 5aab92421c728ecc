"""The numeric judge names a plain ×2 or ×½ slip when nothing more specific explains the number."""
from __future__ import annotations

from pathlib import Path

import pytest

from quizprep.bank import load_banks
from quizprep.bank.numeric import draw, judge

BANK = """\
topic: t
title: T
questions:
  - id: q-cache
    kind: numeric
    difficulty: 1
    tags: [a]
    prompt: How many bytes?
    explanation: 4 GiB.
    references: [ref]
    params:
      gib: 4
    answer: gib * 2**30
    unit: B
    tolerance: 0.01
{wrong}"""

NAMED = """\
    wrong_answers:
      - formula: answer * 2
        message: "Both K and V counted twice."
"""


def question(tmp_path: Path, wrong: str = ""):
    path = tmp_path / "bank.yaml"
    path.write_text(BANK.format(wrong=wrong))
    (loaded,) = load_banks([path]).questions
    return loaded


@pytest.mark.parametrize(("given", "start"), [("8 GiB", "Off by ×2: twice the answer"),
                                              ("2 GiB", "Off by ×½: half the answer")])
def test_twice_or_half_the_answer_is_named(tmp_path, given, start):
    quiz = question(tmp_path)
    verdict = judge(quiz, draw(quiz, 1), given)
    assert not verdict.correct and verdict.diagnosis.startswith(start)


def test_a_more_specific_slip_wins(tmp_path):
    quiz = question(tmp_path, NAMED)
    assert judge(quiz, draw(quiz, 1), "8 GiB").diagnosis == "Both K and V counted twice."
    assert judge(quiz, draw(quiz, 1), "3 GiB").diagnosis is None  # no factor of 2: nothing to name
    assert judge(quiz, draw(quiz, 1), "4 GB").diagnosis.startswith("Off by ×0.931")  # the unit's own slip
