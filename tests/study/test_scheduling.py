"""FSRS mapping with fuzzing off and fixed UTC times."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from fsrs import Rating, State

from quizprep.study.scheduling import (
    card_id, make_scheduler, rating_for_answer, rating_for_score, retrievability, review, slow_after,
)

T0 = datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("kind, difficulty, seconds", [
    ("choice", 1, 30), ("choice", 2, 45), ("choice", 3, 60),
    ("numeric", 1, 60), ("numeric", 2, 90), ("numeric", 3, 120),
])
def test_slow_threshold_grows_with_difficulty(kind, difficulty, seconds):
    assert slow_after(kind, difficulty) == seconds
    assert rating_for_answer(kind, difficulty, True, seconds) == Rating.Good
    assert rating_for_answer(kind, difficulty, True, seconds + 0.1) == Rating.Hard
    assert rating_for_answer(kind, difficulty, False, 1.0) == Rating.Again
    assert rating_for_answer(kind, difficulty, False, seconds * 10) == Rating.Again


@pytest.mark.parametrize("score, rating", [
    (0.0, Rating.Again), (0.49, Rating.Again), (0.5, Rating.Hard), (0.74, Rating.Hard),
    (0.75, Rating.Good), (0.94, Rating.Good), (0.95, Rating.Easy), (1.0, Rating.Easy),
])
def test_rubric_score_thresholds(score, rating):
    assert rating_for_score(score) == rating


@pytest.mark.parametrize("score", [-0.01, 1.01])
def test_rubric_score_outside_unit_interval_is_refused(score):
    with pytest.raises(ValueError):
        rating_for_score(score)


def test_a_new_card_is_relearnt_in_minutes_when_wrong_and_graduates_on_any_pass():
    scheduler = make_scheduler(fuzzing=False)
    again = review(scheduler, None, "q", Rating.Again, T0)
    assert again.state == State.Learning and again.due == T0 + timedelta(minutes=10)
    # At 90 % retention FSRS's first interval is the initial stability (w1, w2, w3 for Hard, Good,
    # Easy: 1.2931, 2.3065, 8.2956 days), rounded to whole days.
    for rating, days in ((Rating.Hard, 1), (Rating.Good, 2), (Rating.Easy, 8)):
        passed = review(scheduler, None, "q", rating, T0)
        assert passed.state == State.Review and passed.due == T0 + timedelta(days=days), rating
        relearnt = review(scheduler, again, "q", rating, again.due)
        assert relearnt.state == State.Review and relearnt.due - again.due >= timedelta(days=1), rating
    assert again.card_id == passed.card_id == card_id("q") != card_id("other")


def review_sequence(ratings: list[Rating], fuzzing: bool = False):
    scheduler = make_scheduler(fuzzing=fuzzing)
    card, now = None, T0
    for rating in ratings:
        card = review(scheduler, card, "q", rating, now)
        now = card.due
    return card


def test_graduated_card_intervals_order_by_rating():
    graduated = review_sequence([Rating.Good, Rating.Good])
    assert graduated.state == State.Review
    scheduler = make_scheduler(fuzzing=False)
    at = graduated.due
    intervals = {r: review(scheduler, graduated, "q", r, at).due - at for r in (Rating.Hard, Rating.Good, Rating.Easy)}
    assert timedelta(days=1) <= intervals[Rating.Hard] < intervals[Rating.Good] < intervals[Rating.Easy]
    lapse = review(scheduler, graduated, "q", Rating.Again, at)
    assert lapse.state == State.Relearning and lapse.due == at + timedelta(minutes=10)


def test_without_fuzzing_schedules_repeat_exactly():
    ratings = [Rating.Good, Rating.Good, Rating.Good, Rating.Hard, Rating.Good]
    assert review_sequence(ratings).to_dict() == review_sequence(ratings).to_dict()


def test_retrievability_is_zero_for_unseen_and_falls_with_time():
    scheduler = make_scheduler(fuzzing=False)
    assert retrievability(scheduler, None, T0) == 0.0
    card = review_sequence([Rating.Good, Rating.Good])
    soon = retrievability(scheduler, card, card.last_review + timedelta(days=1))
    later = retrievability(scheduler, card, card.last_review + timedelta(days=30))
    assert 0 < later < soon <= 1


def test_review_time_in_another_zone_is_treated_as_the_same_instant():
    scheduler = make_scheduler(fuzzing=False)
    plus_two = timezone(timedelta(hours=2))
    local = review(scheduler, None, "q", Rating.Again, T0.astimezone(plus_two))
    assert local.due == T0 + timedelta(minutes=10)
