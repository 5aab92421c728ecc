"""What a grade teaches the quiz, as data: the mistakes it named and the questions it passed.

The grader imports no study: the command line (`quizprep.cli.grade`) records these in the
learner's progress database, so the quiz reviews what the code got wrong.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from quizprep.grader.exercises import load_spec
from quizprep.grader.spec import Status

if TYPE_CHECKING:
    from quizprep.grader.grade import GradeReport


def named_mistakes(report: GradeReport) -> list[tuple[str, str, str]]:
    """(diagnosis id, diagnosis, quiz question) of each failed check that named its mistake."""
    return [(c.diagnosis_id, c.diagnosis, c.quiz)
            for c in report.checks if c.status == Status.FAIL and c.diagnosis_id and c.quiz]


def passed_lessons(report: GradeReport) -> list[str]:
    """The questions a passing grade is good on: all those its exercise links to; none on a fail."""
    return linked_lessons(report.exercise) if report.passed else []


def linked_lessons(exercise: str) -> list[str]:
    """The quiz questions an exercise's spec declares, in its order. A track graded as another
    exercise (attention-numpy as attention) declares that one's."""
    return list(load_spec(exercise).lessons)
