"""What a grade teaches the quiz, as data: the mistakes it named and the questions it passed.

The grader imports no study: the command line (`quizprep.cli.grade`) records these in the
learner's progress database, so the quiz reviews what the code got wrong.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from quizprep.grader.problem import Diagnosis

if TYPE_CHECKING:
    from quizprep.grader.grade import GradeReport


def named_mistakes(report: GradeReport) -> list[tuple[str, str, str]]:
    """(diagnosis id, diagnosis, quiz question) of each failed check that named its mistake."""
    return [(c.diagnosis_id, c.diagnosis, c.quiz)
            for c in report.checks if c.status == "fail" and c.diagnosis_id and c.quiz]


def passed_lessons(report: GradeReport) -> list[str]:
    """The questions a passing grade is good on: all those its exercise links to; none on a fail."""
    return linked_lessons(report.exercise) if report.passed else []


def linked_lessons(exercise: str) -> list[str]:
    """The quiz questions an exercise's named mistakes link to, in the order its module names them.
    A track graded as another exercise (attention-numpy as attention) links to that one's."""
    package = "quizprep.grader.exercises."
    module = importlib.import_module(f"{package}{exercise.replace('-', '_')}")
    found: list[str] = []
    for name, value in vars(module).items():
        if isinstance(value, ModuleType) and value.__name__.startswith(package) and not name.startswith("_"):
            found.extend(linked_lessons(value.__name__.removeprefix(package)))
        elif name.startswith("QUIZ") and isinstance(value, str):
            found.append(value)
            continue
        candidates = getattr(value, "hypotheses", value)
        if isinstance(candidates, Diagnosis):
            candidates = (candidates,)
        if isinstance(candidates, (tuple, list)):
            found.extend(item.quiz for item in candidates if isinstance(item, Diagnosis) and item.quiz)
    return list(dict.fromkeys(found))
