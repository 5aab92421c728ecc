"""Recording a grade in the learner's progress database, so the quiz reviews what the code got wrong.

The study layer is imported only here, when a grade is recorded. Recording never fails a
grade: a database that cannot be written costs one line on stderr.
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from quizprep.grader.problem import Diagnosis

if TYPE_CHECKING:
    from quizprep.grader.grade import GradeReport


def record(report: GradeReport, db: str | Path | None = None,
           now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> bool:
    """Record `report` in the progress database at `db` (`--db`, else `$QUIZPREP_DB`, else the
    default one). Returns whether it was recorded."""
    from quizprep.study.grades import NamedMistake, record_grade
    from quizprep.study.store import Store, StoreError

    mistakes = [NamedMistake(c.diagnosis_id, c.diagnosis, c.quiz)
                for c in report.checks if c.status == "fail" and c.diagnosis_id and c.quiz]
    try:
        with Store.open(db) as store:
            grade = record_grade(store, exercise=report.exercise, file=str(Path(report.file).resolve()),
                                 graded_at=now(), score=report.score, passed=report.passed, mistakes=mistakes,
                                 passed_lessons=linked_lessons(report.exercise) if report.passed else [])
            path = store.path
    except (StoreError, OSError) as error:
        print(f"quizprep grade: the grade was not recorded in your progress: {error}", file=sys.stderr)
        return False
    due = "" if grade.passed or not grade.lessons else (
        f"; due for review now: {', '.join(grade.lessons)} (quizprep quiz --mode review"
        f"{f' --db {db}' if db else ''})")
    print(f"quizprep grade: recorded in {path}{due}", file=sys.stderr)
    return True


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
