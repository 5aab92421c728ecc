"""`quizprep grade` and `quizprep init`: the grader's commands, with each grade recorded in the
learner's progress database, so the quiz reviews what the code got wrong.

The grader returns a report and what it teaches (`quizprep.grader.record`); this module records
them through study. Recording never fails a grade: a database that cannot be written costs one
line on stderr.
"""
from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from quizprep.cli import exercism_command, grade_command

if TYPE_CHECKING:
    from quizprep.grader.grade import GradeReport


def register(subparsers: argparse._SubParsersAction) -> None:
    grade_command.register(subparsers, record=record)
    exercism_command.register(subparsers)


def record(report: GradeReport, db: str | Path | None = None,
           now: Callable[[], datetime] = lambda: datetime.now(timezone.utc)) -> bool:
    """Record `report` in the progress database at `db` (`--db`, else `$QUIZPREP_DB`, else the
    default one). Returns whether it was recorded."""
    from quizprep.grader.record import named_mistakes, passed_lessons
    from quizprep.study.grades import NamedMistake, record_grade
    from quizprep.study.store import Store, StoreError

    mistakes = [NamedMistake(*mistake) for mistake in named_mistakes(report)]
    try:
        with Store.open(db) as store:
            grade = record_grade(store, exercise=report.exercise, file=str(Path(report.file).resolve()),
                                 graded_at=now(), score=report.score, passed=report.passed, mistakes=mistakes,
                                 passed_lessons=passed_lessons(report))
            path = store.path
    except (StoreError, OSError) as error:
        print(f"quizprep grade: the grade was not recorded in your progress: {error}", file=sys.stderr)
        return False
    due = "" if grade.passed or not grade.lessons else (
        f"; due for review now: {', '.join(grade.lessons)} (quizprep quiz --mode review"
        f"{f' --db {db}' if db else ''})")
    print(f"quizprep grade: recorded in {path}{due}", file=sys.stderr)
    return True
