"""`quizprep grade` records its result in the progress database: lapses, passes, opting out, and a
database that cannot be written never failing the grade."""
from __future__ import annotations

import argparse
from datetime import datetime, timezone

from quizprep.cli import grade as command
from quizprep.cli.grade import record
from quizprep.grader.grade import GradeReport
from quizprep.grader.record import linked_lessons
from quizprep.grader.spec import CheckResult
from quizprep.study.store import Store

WHEN = datetime(2026, 11, 20, 14, 0, tzinfo=timezone.utc)
NO_MAX_SHIFT = ("import torch\n\ndef stable_softmax(x, dim=-1):\n    e = x.exp()\n"
                "    return e / e.sum(dim=dim, keepdim=True)\n")


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="quizprep")
    command.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.handler(args)


def report(*checks: CheckResult) -> GradeReport:
    return GradeReport("softmax", "Softmax", "/home/me/softmax.py", list(checks), {})


def test_a_named_mistake_is_a_lapse_that_makes_its_question_due_now(tmp_path):
    db = tmp_path / "p.db"
    failed = CheckResult("large", "Large logits", "fail", diagnosis="exp without subtracting the maximum",
                         quiz="softmax-max-shift", diagnosis_id="no-max-shift")
    unnamed = CheckResult("shape", "Shape", "fail", quiz="softmax-axis")  # a hint, not a diagnosis
    assert record(report(CheckResult("basic", "Basic", "pass"), failed, unnamed), db, now=lambda: WHEN)
    with Store.open(db) as store:
        assert set(store.cards()) == {"softmax-max-shift"}
        assert store.card("softmax-max-shift").due == WHEN
        (grade,) = store.grades()
    assert (grade.exercise, grade.file, grade.score, grade.passed) == ("softmax", "/home/me/softmax.py", 0.3333, False)
    assert [m.id for m in grade.diagnoses] == ["no-max-shift"] and grade.lessons == ("softmax-max-shift",)


def test_a_pass_is_good_on_every_question_the_exercise_links_to(tmp_path):
    db = tmp_path / "p.db"
    assert record(report(CheckResult("basic", "Basic", "pass")), db, now=lambda: WHEN)
    with Store.open(db) as store:
        cards = store.cards()
    assert set(cards) == set(linked_lessons("softmax")) == {"softmax-max-shift", "softmax-axis",
                                                            "numerics-fp32-softmax"}
    assert all(card.due > WHEN and card.last_review == WHEN for card in cards.values())


def test_grade_records_unless_told_not_to(tmp_path, capsys):
    source = tmp_path / "softmax.py"
    source.write_text(NO_MAX_SHIFT)
    db = tmp_path / "progress.db"
    assert run_cli("grade", str(source), "--db", str(db), "--no-record") == 1
    assert not db.exists()
    assert "recorded" not in capsys.readouterr().err
    assert run_cli("grade", str(source), "--db", str(db)) == 1
    assert capsys.readouterr().err == (f"quizprep grade: recorded in {db}; due for review now: softmax-max-shift "
                                       f"(quizprep quiz --mode review --db {db})\n")
    with Store.open(db) as store:
        assert [g.file for g in store.grades()] == [str(source)]
        assert "softmax-max-shift" in store.cards()


def test_a_database_that_cannot_be_written_does_not_fail_the_grade(tmp_path, capsys):
    source = tmp_path / "softmax.py"
    source.write_text(NO_MAX_SHIFT)
    notes = tmp_path / "notes.md"
    notes.write_text("my notes\n")
    assert run_cli("grade", str(source), "--db", str(notes)) == 1
    captured = capsys.readouterr()
    assert "without subtracting the maximum" in captured.out
    (line,) = captured.err.splitlines()
    assert line.startswith("quizprep grade: the grade was not recorded") and "not a quizprep progress database" in line
    assert notes.read_text() == "my notes\n"


def test_every_exercise_links_to_questions_that_exist_in_the_shipped_banks():
    from quizprep.bank import load_banks
    from quizprep.grader.exercises import available

    known = {q.id for q in load_banks().questions}
    links = {exercise: linked_lessons(exercise) for exercise in available()}
    assert all(links.values()), [name for name, ids in links.items() if not ids]
    assert {qid for ids in links.values() for qid in ids} <= known
    assert linked_lessons("attention-numpy") == linked_lessons("attention")  # graded as the torch exercise
