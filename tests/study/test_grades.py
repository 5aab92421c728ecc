"""Exercise grades in the schedule: lapses make questions due with a reason, passes count as Good,
the schema migrates from version 2 and a damaged grade row is set aside like any other."""
from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import timedelta

from quizprep.study import builders
from quizprep.study import storefile
from quizprep.study.grades import NamedMistake, due_reasons, exercise_statuses, record_grade
from quizprep.study.scheduling import make_scheduler
from quizprep.study.store import Store

SPLIT = NamedMistake("split-no-transpose", "heads split with a reshape but no transpose", "alpha-one")


def grade_mha(store, clock, *, passed=False, mistakes=(SPLIT,), lessons=()):
    return record_grade(store, exercise="mha", file="/work/ex/mha.py", graded_at=clock(), score=1.0 if passed else 0.5,
                        passed=passed, mistakes=mistakes, passed_lessons=lessons)


def answer_right(store, questions, clock, question_id):
    session = builders.single(store, questions, question_id, now=clock)
    showing = session.next()
    return session.answer_choice(showing, showing.question.correct_indices)


def test_a_named_mistake_makes_its_question_due_now_with_the_reason(store, questions, clock):
    answer_right(store, questions, clock, "alpha-one")
    clock.tick(60)
    assert store.card("alpha-one").due > clock() + timedelta(minutes=5)
    grade = grade_mha(store, clock)
    assert grade.lessons == ("alpha-one",)
    assert store.card("alpha-one").due == clock()
    review = builders.review(store, questions, now=clock)
    assert review.queue == ["alpha-one"]
    assert review.due_reasons == {
        "alpha-one": f"your mha.py on {clock().date()}: heads split with a reshape but no transpose"}


def test_answering_the_question_again_clears_the_reason(store, questions, clock):
    grade_mha(store, clock)
    clock.tick(60)
    answer_right(store, questions, clock, "alpha-one")
    assert due_reasons(store) == {}


def test_a_pass_reviews_the_linked_questions_as_good(store, clock):
    grade_mha(store, clock, passed=True, mistakes=(), lessons=["alpha-one", "beta-one", "alpha-one"])
    cards = store.cards()
    assert set(cards) == {"alpha-one", "beta-one"}
    assert all(card.due > clock() for card in cards.values())
    (stored,) = store.grades()
    assert stored.passed and stored.lessons == ("alpha-one", "beta-one")
    assert due_reasons(store) == {}


def test_a_later_pass_closes_the_diagnosis(store, clock):
    grade_mha(store, clock)
    clock.tick(minutes=5)
    grade_mha(store, clock, passed=True, mistakes=(), lessons=["alpha-one"])
    assert due_reasons(store) == {}
    (status,) = exercise_statuses(store)
    assert status.passed and status.open_diagnoses == () and status.graded_at == clock()


def test_exercise_status_lists_open_diagnoses_of_the_latest_grade(store, clock):
    grade_mha(store, clock, mistakes=(SPLIT, NamedMistake("no-scale", "scores not scaled", "")))
    (status,) = exercise_statuses(store)
    assert (status.exercise, status.score, status.passed) == ("mha", 0.5, False)
    assert status.open_diagnoses == ("heads split with a reshape but no transpose", "scores not scaled")
    assert store.card("alpha-one") is not None and len(store.cards()) == 1  # no quiz id: no review


def test_version_2_database_migrates_keeping_its_answers(db_path, questions, clock, monkeypatch):
    monkeypatch.setattr(storefile, "MIGRATIONS", storefile.MIGRATIONS[:2])
    monkeypatch.setattr(storefile, "SCHEMA_VERSION", 2)
    with Store.open(db_path, check_rows=False) as old:  # this quizprep knows no grades table
        answer_right(old, questions, clock, "beta-one")
        assert old.schema_version() == 2
    monkeypatch.undo()
    with Store.open(db_path, scheduler=make_scheduler(fuzzing=False)) as store:
        assert store.schema_version() == storefile.SCHEMA_VERSION and store.notices == ()
        assert [a.question_id for a in store.answers()] == ["beta-one"]
        grade_mha(store, clock)
        assert [g.exercise for g in store.grades()] == ["mha"]


def test_a_damaged_grade_row_is_set_aside_and_the_rest_reads(db_path, clock):
    with Store.open(db_path) as store:
        grade_mha(store, clock)
        clock.tick(60)
        grade_mha(store, clock, passed=True, mistakes=(), lessons=["beta-one"])
    with closing(sqlite3.connect(db_path)) as raw, raw:
        raw.execute("UPDATE grades SET diagnoses = '[{\"id\": 1}' WHERE id = 1")
    with Store.open(db_path) as store:
        assert "1 exercise grade" in store.notices[0]
        assert [g.passed for g in store.grades()] == [True]
    with closing(sqlite3.connect(db_path)) as raw, raw:
        assert raw.execute("SELECT id, diagnoses FROM damaged_grades").fetchall() == [(1, '[{"id": 1}')]


def test_a_lapse_on_a_never_seen_question_is_due_now(store, clock):
    record_grade(store, exercise="mha", file="mha.py", graded_at=clock(), score=0.0, passed=False,
                 mistakes=[SPLIT], passed_lessons=[])
    card = store.card("alpha-one")
    assert card.due == clock() and card.last_review == clock()


def test_stats_show_each_exercise_beside_the_topics(store, questions, clock):
    from rich.console import Console

    from quizprep.cli.progress import stats_renderables
    from quizprep.study.stats import compute_stats

    interleaved = NamedMistake("split-interleaved", "head h takes features [h·d, (h+1)·d)", "alpha-one")
    grade_mha(store, clock, mistakes=(interleaved,))
    record_grade(store, exercise="softmax", file="softmax.py", graded_at=clock(), score=1.0, passed=True,
                 mistakes=(), passed_lessons=["beta-one"])
    stats = compute_stats(store, questions, now=clock())
    assert [(e.exercise, e.passed) for e in stats.exercises] == [("mha", False), ("softmax", True)]
    console = Console(record=True, width=150)
    for part in stats_renderables(stats):
        console.print(part)
    text = console.export_text()
    assert "Exercises" in text and "head h takes features [h·d, (h+1)·d)" in text
    assert any("softmax" in line and "100%" in line and "passed" in line for line in text.splitlines())


def test_a_garbled_card_is_rebuilt_with_its_grade_reviews(db_path, questions, clock):
    with Store.open(db_path, scheduler=make_scheduler(fuzzing=False)) as store:
        answer_right(store, questions, clock, "alpha-one")
        clock.tick(minutes=30)
        grade_mha(store, clock)
        before = store.card("alpha-one").to_json()
        clock.tick(minutes=1)
        grade_mha(store, clock, passed=True, mistakes=(), lessons=["beta-one"])
        passed_card = store.card("beta-one").to_json()
    with closing(sqlite3.connect(db_path)) as raw, raw:
        raw.execute("UPDATE cards SET card = '{\"card_id\": 1}'")
    with Store.open(db_path, scheduler=make_scheduler(fuzzing=False)) as store:
        assert "alpha-one, beta-one was rebuilt" in store.notices[0]
        assert store.card("alpha-one").to_json() == before  # the lapse replayed: still due at the grade
        assert store.card("beta-one").to_json() == passed_card
