from __future__ import annotations

import random
from datetime import date, timedelta, timezone

import pytest

from quizprep.bank import load_banks
from quizprep.study import builders
from quizprep.study.stats import bank_warnings, compute_stats, streak
from quizprep.study.overview import topic_overview

UTC = timezone.utc


def answer(run, clock, qid, right, seconds=5, rubric=None):
    run.queue.insert(0, qid)
    showing = run.next()
    clock.tick(seconds)
    question = showing.question
    if question.kind == "choice":
        picks = question.correct_indices if right else set(range(len(question.choices))) - question.correct_indices
        return run.answer_choice(showing, picks)
    if question.kind == "numeric":
        return run.answer_numeric(showing, str(showing.draw.answer * (1 if right else 2)))
    return run.assess(run.answer_free(showing, "text"), rubric)


@pytest.fixture
def run(store, questions, clock):
    return builders.practice(store, questions, now=clock, rng=random.Random(0))


def topic(stats, name):
    return next(t for t in stats.topics if t.topic == name)


def test_accuracy_and_counts_per_topic(store, questions, clock, run):
    answer(run, clock, "alpha-one", True)
    answer(run, clock, "alpha-one", False)
    answer(run, clock, "alpha-follow", None, rubric=[True, True, False])  # 0.75
    answer(run, clock, "beta-one", True)
    stats = compute_stats(store, questions, now=clock(), tz=UTC, titles={"alpha": "Alpha topic"})
    alpha, beta = topic(stats, "alpha"), topic(stats, "beta")
    assert (alpha.title, alpha.questions, alpha.seen, alpha.attempts) == ("Alpha topic", 4, 2, 3)
    assert alpha.accuracy == pytest.approx((1 + 0 + 0.75) / 3)
    assert (beta.title, beta.seen, beta.attempts, beta.accuracy) == ("beta", 1, 1, 1.0)
    assert stats.total_answers == 4 and stats.accuracy == pytest.approx(2.75 / 4)


def test_mastery_is_zero_when_unseen_or_last_wrong_and_grows_with_spaced_success(store, questions, clock, run):
    stats = compute_stats(store, questions, now=clock(), tz=UTC)
    assert topic(stats, "beta").mastery == 0.0 and topic(stats, "beta").accuracy is None
    answer(run, clock, "beta-one", False)
    assert topic_overview(store, questions, now=clock())[1].mastery == 0.0
    answer(run, clock, "beta-one", True)
    once = topic_overview(store, questions, now=clock())[1].mastery
    for _ in range(3):  # answer right each time it comes due
        clock.now = store.card("beta-one").due
        answer(run, clock, "beta-one", True)
    spaced = topic_overview(store, questions, now=clock())[1].mastery
    # beta has two questions and beta-two was never answered, so mastery stays below 1/2
    assert 0 < once < spaced < 0.5


def test_streak_counts_consecutive_days_up_to_today_or_yesterday():
    today = date(2025, 3, 10)
    days = [today - timedelta(days=n) for n in (0, 1, 2, 4, 5)]
    assert streak(days, today) == 3
    assert streak(days[1:], today) == 2  # nothing yet today: the streak from yesterday still stands
    assert streak(days[3:], today) == 0
    assert streak([], today) == 0


def test_history_and_streak_use_local_days(store, questions, clock, run):
    clock.now = clock.now.replace(hour=23, minute=0)
    answer(run, clock, "beta-one", True)
    clock.tick(hours=2)  # 01:05 UTC the next day
    answer(run, clock, "beta-two", False)
    in_utc = compute_stats(store, questions, now=clock(), tz=UTC, history_days=3)
    assert [(d.answers, d.correct) for d in in_utc.history] == [(0, 0), (1, 1), (1, 0)]
    assert in_utc.history[-1].day == clock().date() and in_utc.streak_days == 2
    west = timezone(timedelta(hours=-5))  # both answers fall on the same local evening
    in_west = compute_stats(store, questions, now=clock(), tz=west, history_days=3)
    assert [d.answers for d in in_west.history] == [0, 0, 2] and in_west.streak_days == 1


def test_due_ahead_buckets_cards_by_day_with_overdue_today(store, questions, clock, run):
    answer(run, clock, "beta-one", True)  # due in 10 minutes
    answer(run, clock, "beta-two", True)
    clock.now = store.card("beta-one").due
    answer(run, clock, "beta-one", True)  # graduates: due in days
    later = store.card("beta-one").due
    clock.tick(hours=1)  # beta-two is now overdue
    stats = compute_stats(store, questions, now=clock(), tz=UTC, ahead_days=30)
    counts = dict(stats.due_ahead)
    assert counts[clock().date()] == 1 and counts[later.date()] == 1 and sum(counts.values()) == 2
    assert topic(stats, "beta").due == 1


def test_missed_criteria_most_missed_first(store, questions, clock, run):
    answer(run, clock, "alpha-follow", None, rubric=[True, False, False])
    answer(run, clock, "alpha-follow", None, rubric=[True, False, True])
    stats = compute_stats(store, questions, now=clock(), tz=UTC)
    assert [(m.question_id, m.criterion, m.missed, m.assessed) for m in stats.missed_criteria] == [
        ("alpha-follow", "gives an example", 2, 2),
        ("alpha-follow", "names the pitfall", 1, 2),
    ]


def test_topic_of_a_removed_bank_keeps_its_history(store, questions, clock, run):
    answer(run, clock, "beta-one", True)
    alpha_only = [q for q in questions if q.topic == "alpha"]
    beta = topic(compute_stats(store, alpha_only, now=clock(), tz=UTC), "beta")
    assert (beta.questions, beta.attempts, beta.mastery) == (0, 1, None)


def test_bank_warnings_name_file_and_line():
    from pathlib import Path

    result = load_banks([Path(__file__).parent / "data" / "broken.yaml"])
    (warning,) = bank_warnings(result)
    assert warning.endswith("broken.yaml:16: [broken-bad] difficulty must be 1, 2 or 3, got 7")
    assert [q.id for q in result.questions] == ["broken-good"]
