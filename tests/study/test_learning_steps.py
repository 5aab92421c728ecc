"""Issue 13: a sitting of right answers must not flood the review queue. A new question answered
right, fast or slow, is next due days later; one answered wrong comes back within minutes."""
from __future__ import annotations

from datetime import timedelta

import pytest
from fsrs import Rating

from quizprep.study import builders
from test_session import answer_right, answer_wrong, drain


def due_after(store, questions, clock, delay):
    return [q.id for q in builders.due_questions(store, questions, clock() + delay)]


@pytest.mark.parametrize(("seconds", "ratings"), [
    (5, {Rating.Good, Rating.Easy}),  # a free answer that ticks the whole rubric is Easy
    (200, {Rating.Hard, Rating.Easy}),  # right, but slower than slow_after for every kind
])
def test_a_sitting_of_right_answers_leaves_nothing_due_that_day(store, questions, clock, seconds, ratings):
    drain(builders.practice(store, questions, now=clock), clock, answer_right, seconds=seconds)
    assert {a.rating for a in store.answers()} == ratings and len(store.answers()) == len(questions)
    assert due_after(store, questions, clock, timedelta(hours=1)) == []
    assert due_after(store, questions, clock, timedelta(hours=23)) == []
    assert len(due_after(store, questions, clock, timedelta(days=8, hours=1))) == len(questions)


def test_a_wrong_answer_comes_back_within_minutes(store, questions, clock):
    run = builders.practice(store, questions, now=clock)
    run.requeue_wrong = False
    drain(run, clock, answer_wrong)
    assert {a.rating for a in store.answers()} == {Rating.Again}
    assert len(due_after(store, questions, clock, timedelta(minutes=10))) == len(questions)


def test_right_after_wrong_graduates_and_wrong_after_right_relearns(store, questions, clock):
    run = builders.practice(store, questions, ["beta"], now=clock)
    drain(run, clock, answer_wrong)
    clock.tick(minutes=10)
    drain(builders.review(store, questions, ["beta"], now=clock), clock, answer_right, seconds=200)
    assert due_after(store, questions, clock, timedelta(hours=23)) == []
    clock.tick(days=30)
    drain(builders.review(store, questions, ["beta"], now=clock), clock, answer_wrong)
    assert sorted(due_after(store, questions, clock, timedelta(minutes=10))) == ["beta-one", "beta-two"]
