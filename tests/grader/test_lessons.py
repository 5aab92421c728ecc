"""Every quiz id the grader points to exists in the question banks; every diagnosis names one."""
from __future__ import annotations

import re
from pathlib import Path

from quizprep.grader.exercises import load_spec
from quizprep.grader.lessons import LESSONS

BANKS = Path(__file__).parents[2] / "questions"


def bank_ids() -> set[str]:
    ids = set()
    for bank in BANKS.glob("*.yaml"):
        ids.update(re.findall(r"^\s*-?\s*id:\s*([a-z0-9-]+)\s*$", bank.read_text(), flags=re.MULTILINE))
    return ids


def test_every_lesson_id_is_a_question():
    missing = set(LESSONS) - bank_ids()
    assert not missing, f"quiz ids not found in questions/: {sorted(missing)}"


def test_every_hypothesis_points_to_a_lesson():
    for name in ("attention", "masking", "softmax", "mha", "gqa"):
        module = __import__(f"quizprep.grader.exercises.{name}", fromlist=["SPEC"])
        problems = [getattr(module, attr) for attr in ("PROBLEM", "CAUSAL", "PADDING") if hasattr(module, attr)]
        assert load_spec(name).name == name and problems
        for problem in problems:
            for hypothesis in problem.hypotheses:
                assert hypothesis.quiz in LESSONS, (name, hypothesis.id)
                assert hypothesis.hint and hypothesis.title


def test_each_spec_declares_the_questions_its_named_mistakes_teach():
    from quizprep.grader.exercises import available

    for name in available():
        module = __import__(f"quizprep.grader.exercises.{name}", fromlist=["SPEC"])
        problems = [getattr(module, attr) for attr in ("PROBLEM", "CAUSAL", "PADDING") if hasattr(module, attr)]
        taught = {h.quiz for problem in problems for h in problem.hypotheses if h.quiz}
        declared = module.SPEC.lessons
        assert taught <= set(declared) and len(set(declared)) == len(declared), name
