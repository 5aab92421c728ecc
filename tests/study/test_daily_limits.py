"""Optional daily limits on new questions and reviews, as in Anki (issue 21, item 5)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from quizprep.study import builders
from quizprep.study.limits import DailyLimits, allowance, day_bounds, read_limits, save_limits
from test_session import answer_right, drain

UTC = timezone.utc


def limited(store, clock, **limits):
    save_limits(store, DailyLimits(**limits))
    return allowance(store, read_limits(store), clock(), UTC)


def test_no_limits_by_default_and_practice_asks_everything(store, questions, clock):
    assert read_limits(store) == DailyLimits() and not read_limits(store).set
    assert len(drain(builders.practice(store, questions, now=clock), clock)) >= len(questions)


def test_limits_are_saved_cleared_and_garbled_ones_read_as_none(store):
    save_limits(store, DailyLimits(new=20, reviews=200))
    assert read_limits(store) == DailyLimits(20, 200)
    assert read_limits(store).describe() == "20 new, 200 reviews a day"
    save_limits(store, DailyLimits(new=None, reviews=0))
    assert read_limits(store) == DailyLimits(None, 0)
    store.set_setting("new_per_day", "twenty")
    assert read_limits(store).new is None
    with pytest.raises(ValueError):
        save_limits(store, DailyLimits(new=-1))


def test_practice_asks_new_questions_up_to_the_new_limit_then_again_the_next_day(store, questions, clock):
    daily = limited(store, clock, new=2)
    first = drain(builders.practice(store, questions, now=clock, allowance=daily), clock)
    assert len(set(first)) == 2
    daily = allowance(store, read_limits(store), clock(), UTC)
    assert (daily.new_left, daily.new_done, daily.reached()) == (0, 2, "today's new limit (2)")
    # Nothing ahead of schedule under limits: the two just answered are not due yet.
    assert builders.practice(store, questions, now=clock, allowance=daily).finished
    clock.tick(days=1)
    daily = allowance(store, read_limits(store), clock(), UTC)
    assert daily.new_left == 2 and daily.new_done == 0
    again = builders.practice(store, questions, now=clock, allowance=daily)
    assert set(again.queue) - set(first) and len(set(again.queue) - set(first)) == 2


def test_review_asks_due_questions_up_to_the_review_limit(store, questions, clock):
    drain(builders.practice(store, questions, now=clock), clock)  # every question seen, no limits
    clock.tick(days=60)  # all due
    due = builders.due_questions(store, questions, clock())
    assert len(due) == len(questions)
    daily = limited(store, clock, reviews=3)
    run = builders.review(store, questions, now=clock, allowance=daily)
    assert len(drain(run, clock)) == 3
    daily = allowance(store, read_limits(store), clock(), UTC)
    assert (daily.reviews_left, daily.reviews_done) == (0, 3)
    assert builders.review(store, questions, now=clock, allowance=daily).finished
    # The next review waits for tomorrow, though cards are due now.
    first_due = min(store.card(q.id).due for q in questions)
    assert daily.next_review(first_due) == daily.tomorrow > clock()


def test_cram_answers_count_for_neither_limit(store, questions, clock):
    run = builders.cram(store, questions, now=clock)
    drain(run, clock)
    daily = limited(store, clock, new=1, reviews=1)
    assert (daily.new_done, daily.reviews_done, daily.new_left) == (0, 0, 1)


def test_a_question_answered_twice_on_its_first_day_is_new_not_a_review(store, questions, clock):
    run = builders.practice(store, questions, now=clock)
    showing = run.next()
    answer_right(run, showing)
    again = builders.single(store, questions, showing.question.id, now=clock)
    clock.tick(60)
    answer_right(again, again.next())
    daily = limited(store, clock, new=5, reviews=5)
    assert (daily.new_done, daily.reviews_done) == (1, 0)


def test_a_day_is_the_learners_calendar_day_daylight_saving_included():
    zone = ZoneInfo("America/New_York")
    start, tomorrow = day_bounds(datetime(2025, 3, 9, 15, 0, tzinfo=UTC), zone)  # the spring-forward day
    assert start == datetime(2025, 3, 9, tzinfo=zone)
    assert tomorrow == datetime(2025, 3, 10, tzinfo=zone)
    assert tomorrow.astimezone(UTC) - start.astimezone(UTC) == timedelta(hours=23)
    late = datetime(2025, 3, 10, 3, 30, tzinfo=UTC)  # still the 9th in New York
    assert day_bounds(late, zone)[0] == start
