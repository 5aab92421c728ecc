"""Exercise grades in the review schedule: what `quizprep grade` found becomes due questions.

A named mistake in graded code is a lapse on the quiz question that teaches it: FSRS reviews
that question with Again and it is due at once, with the reason kept for the review queue. A
passing exercise is a success (Good) on the questions its diagnoses link to. No torch here:
the grader hands over plain values (`quizprep.grader.record`).
"""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import PurePath
from typing import NamedTuple, Sequence

from quizprep.study.rows import Grade, NamedMistake
from quizprep.study.store import Store

__all__ = ["ExerciseStatus", "NamedMistake", "due_reasons", "exercise_statuses", "record_grade"]


class ExerciseStatus(NamedTuple):
    """An exercise's latest grade, and the mistakes it still had."""

    exercise: str
    file: str
    graded_at: datetime
    score: float
    passed: bool
    open_diagnoses: tuple[str, ...]


def record_grade(store: Store, *, exercise: str, file: str, graded_at: datetime, score: float, passed: bool,
                 mistakes: Sequence[NamedMistake], passed_lessons: Sequence[str]) -> Grade:
    """Commit a grade: lapses on the questions of `mistakes`, or, when it `passed`, successes on
    `passed_lessons`. A mistake without a quiz question is stored but reviews nothing."""
    from fsrs import Rating

    lessons = passed_lessons if passed else [m.quiz for m in mistakes if m.quiz]
    lessons = list(dict.fromkeys(lessons))  # one review per question, in first-named order
    grade_id, _ = store.record_grade(
        exercise=exercise, file=file, graded_at=graded_at, score=score, passed=passed,
        diagnoses=json.dumps([m._asdict() for m in mistakes]), lessons=lessons,
        rating=Rating.Good if passed else Rating.Again,
    )
    return Grade(grade_id, exercise, file, graded_at, float(score), passed, tuple(mistakes), tuple(lessons))


def due_reasons(store: Store) -> dict[str, str]:
    """Why questions are due because of graded code, e.g. "your mha.py on 2026-11-20: heads split
    with a reshape but no transpose". A reason lasts until the question is answered again or a
    later grade passes it."""
    reasons: dict[str, tuple[datetime, str]] = {}
    for grade in store.grades():
        for question_id in grade.lessons:
            reasons.pop(question_id, None)
        if not grade.passed:
            for mistake in grade.diagnoses:
                if mistake.quiz in grade.lessons and mistake.quiz not in reasons:
                    reasons[mistake.quiz] = (grade.graded_at, _reason(grade, mistake))
    if not reasons:
        return {}
    earliest = min(when for when, _ in reasons.values())
    answered = {}
    for answer in store.answers(since=earliest):
        answered[answer.question_id] = answer.answered_at
    return {qid: text for qid, (when, text) in reasons.items() if answered.get(qid, when) <= when}


def exercise_statuses(store: Store) -> list[ExerciseStatus]:
    """The latest grade of every exercise graded so far, by exercise name."""
    latest: dict[str, Grade] = {}
    for grade in store.grades():
        latest[grade.exercise] = grade
    return [ExerciseStatus(g.exercise, g.file, g.graded_at, g.score, g.passed,
                           tuple(dict.fromkeys(m.title for m in g.diagnoses)))
            for _, g in sorted(latest.items())]


def _reason(grade: Grade, mistake: NamedMistake) -> str:
    return f"your {PurePath(grade.file).name} on {grade.graded_at.date().isoformat()}: {mistake.title}"
