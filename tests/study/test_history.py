"""A question's history with the due date each answer led to, and why it is due."""
from __future__ import annotations

import random
from datetime import timedelta, timezone

from quizprep.study import builders
from quizprep.study.grades import NamedMistake, record_grade
from quizprep.study.history import card_history, why_due
from quizprep.study.scheduling import make_scheduler, retrievability
from quizprep.study.store import Store
from test_session import answer_right, answer_wrong


def answer(store, questions, clock, question_id, right=True, mode="practice"):
    build = builders.cram if mode == "cram" else builders.practice
    run = build(store, questions, now=clock, rng=random.Random(0))
    run.queue = [question_id]
    showing = run.next()
    clock.tick(5)
    return (answer_right if right else answer_wrong)(run, showing)


def grade(store, clock, passed):
    mistakes = () if passed else (NamedMistake("split", "heads split without a transpose", "beta-one"),)
    record_grade(store, exercise="mha", file="/x/mha.py", graded_at=clock(), score=float(passed), passed=passed,
                 mistakes=mistakes, passed_lessons=("beta-one",))


def test_history_lists_every_answer_with_the_due_date_it_led_to(store, questions, clock):
    grade(store, clock, passed=False)  # a lapse found in code before any answer: the first answer builds on it
    clock.tick(hours=1)
    dues = [answer(store, questions, clock, "beta-one").next_due]
    clock.tick(days=3)
    dues.append(answer(store, questions, clock, "beta-one", right=False).next_due)
    clock.tick(minutes=20)
    dues.append(answer(store, questions, clock, "beta-one").next_due)
    clock.tick(days=1)
    crammed = answer(store, questions, clock, "beta-one", right=False, mode="cram")
    entries = card_history(store, "beta-one")
    assert [(e.mode, e.correct, e.rating_name) for e in entries] == [
        ("practice", True, "Good"), ("practice", False, "Again"), ("practice", True, "Good"), ("cram", False, None)]
    assert [e.due_after for e in entries] == [*dues, None]
    assert dues[0] - entries[0].answered_at == timedelta(days=1)  # a fresh Good would wait 2 days
    assert dues[1] - entries[1].answered_at == timedelta(minutes=10)
    assert crammed.next_due == dues[-1] == store.card("beta-one").due
    assert [e.response for e in entries][:2] == ["1", "2"] and card_history(store, "alpha-one") == []


def test_with_fuzzing_the_latest_entry_shows_the_cards_real_due_date(db_path, questions, clock):
    with Store.open(db_path, scheduler=make_scheduler(fuzzing=True)) as store:
        for _ in range(3):
            due = answer(store, questions, clock, "beta-one").next_due
            clock.now = due
        assert card_history(store, "beta-one")[-1].due_after == store.card("beta-one").due == due


def test_why_due_says_what_put_the_question_in_the_queue(store, questions, by_id, clock):
    question = by_id["beta-one"]
    assert why_due(store, question, clock()).startswith("Never answered")
    answer(store, questions, clock, "beta-one")
    assert why_due(store, question, clock()) == "Not due until 2025-03-05 09:00 UTC."
    clock.tick(days=9)
    recall = retrievability(store.scheduler, store.card("beta-one"), clock())
    assert why_due(store, question, clock()) == (
        f"FSRS predicts your recall of it is now {recall:.0%} and schedules a review when recall falls to 90%: "
        f"due since 2025-03-05 09:00 UTC.")
    answer(store, questions, clock, "beta-one", right=False)
    clock.tick(minutes=10)
    assert why_due(store, question, clock()).startswith("You answered it wrong on 2025-03-12 09:00 UTC")
    grade(store, clock, passed=False)
    assert why_due(store, question, clock()) == \
        "Due because your mha.py on 2025-03-12: heads split without a transpose."



def test_why_due_speaks_in_the_learners_zone(store, questions, by_id, clock):
    answer(store, questions, clock, "beta-one")
    berlin = clock().astimezone(timezone(timedelta(hours=1), "CET"))
    assert why_due(store, by_id["beta-one"], berlin) == "Not due until 2025-03-05 10:00 CET (UTC+01:00)."


def test_a_question_only_crammed_is_not_due(store, questions, by_id, clock):
    answer(store, questions, clock, "beta-one", right=False, mode="cram")
    assert why_due(store, by_id["beta-one"], clock()).startswith("Answered only in cram mode")
