"""An interview date: predicted recall per topic on that day, practice ordered by it, cram mode
that leaves the schedule alone, and settings kept in the progress database."""
from __future__ import annotations

import random
from datetime import date, datetime, timedelta, timezone

import pytest

from quizprep.study import storefile
from quizprep.study import builders
from quizprep.study.grades import record_grade
from quizprep.study.interview import forecast, save_date, saved_date
from quizprep.study.stats import compute_stats
from quizprep.study.store import Store
from test_session import answer_right, answer_wrong

INTERVIEW = date(2025, 3, 20)  # 17 days after the conftest clock's start, 2025-03-03 09:00 UTC
TITLES = {"alpha": "Alpha topic", "beta": "Beta topic"}


def answer(store, questions, clock, question_id, right):
    run = builders.practice(store, questions, now=clock)
    run.queue = [question_id]
    showing = run.next()
    clock.tick(5)
    (answer_right if right else answer_wrong)(run, showing)


def fsrs_recall(scheduler, card, at):
    """FSRS-6 retrievability written out: R(t) = (1 + F·t/S)^−w20, t in whole days since the last
    review, F chosen so that R(S) = 0.9."""
    decay = -scheduler.parameters[20]
    factor = 0.9 ** (1 / decay) - 1
    days = max(0, (at - card.last_review).days)
    return (1 + factor * days / card.stability) ** decay


def test_forecast_is_fsrs_recall_on_the_interview_morning_per_topic(store, questions, clock):
    answer(store, questions, clock, "beta-one", True)
    answer(store, questions, clock, "beta-two", False)
    answer(store, questions, clock, "alpha-one", True)
    result = forecast(store, questions, INTERVIEW, clock(), TITLES)
    at = datetime(2025, 3, 20, 9, 0, tzinfo=timezone.utc)
    recall = {qid: fsrs_recall(store.scheduler, store.card(qid), at) for qid in ("beta-one", "beta-two", "alpha-one")}
    assert result.on == INTERVIEW and result.days_left == 17
    by_topic = {t.topic: t for t in result.topics}
    # beta-two's latest answer is wrong: it counts 0, whatever FSRS predicts for its card
    assert by_topic["beta"].recall == pytest.approx(recall["beta-one"] / 2, rel=1e-12)
    # alpha has 4 questions, 1 answered: the 3 never answered count 0
    assert by_topic["alpha"].recall == pytest.approx(recall["alpha-one"] / 4, rel=1e-12)
    assert (by_topic["alpha"].seen, by_topic["alpha"].total, by_topic["alpha"].title) == (1, 4, "Alpha topic")
    assert (by_topic["beta"].seen, by_topic["beta"].total) == (2, 2)
    assert [t.topic for t in result.topics] == sorted(by_topic, key=lambda topic: by_topic[topic].recall)
    assert 0 < recall["beta-two"] < recall["beta-one"] < 1


def test_a_wrong_latest_answer_predicts_no_recall_on_the_interview_day(store, questions, clock):
    """Issue 32, item 9: a wrong or "Don't know" answer counted about half a chance (FSRS's
    retrievability of a card rated Again, days later) on the interview day."""
    soon = clock().date() + timedelta(days=4)
    answer(store, questions, clock, "beta-one", False)
    at = datetime.combine(soon, datetime.min.time(), tzinfo=timezone.utc) + timedelta(hours=9)
    assert fsrs_recall(store.scheduler, store.card("beta-one"), at) > 0.4  # what was shown before
    beta = next(t for t in forecast(store, questions, soon, clock(), TITLES).topics if t.topic == "beta")
    assert (beta.seen, beta.recall) == (1, 0.0)
    answer(store, questions, clock, "beta-one", True)  # right again: FSRS's prediction counts
    beta = next(t for t in forecast(store, questions, soon, clock(), TITLES).topics if t.topic == "beta")
    assert beta.recall == pytest.approx(fsrs_recall(store.scheduler, store.card("beta-one"), at) / 2, rel=1e-12)


def test_a_topic_never_answered_predicts_nothing_and_comes_first(store, questions, clock):
    answer(store, questions, clock, "beta-one", True)
    result = forecast(store, questions, INTERVIEW, clock(), TITLES)
    assert [(t.topic, t.recall is None, t.seen) for t in result.topics] == [("alpha", True, 0), ("beta", False, 1)]


def test_recall_counts_every_unanswered_question_as_zero(store, questions, clock):
    """Issue 21: a topic with 1 of 13 questions answered showed that one question's 71 %."""
    answer(store, questions, clock, "alpha-one", True)
    alpha = next(t for t in forecast(store, questions, INTERVIEW, clock(), TITLES).topics if t.topic == "alpha")
    one = fsrs_recall(store.scheduler, store.card("alpha-one"), datetime(2025, 3, 20, 9, 0, tzinfo=timezone.utc))
    assert (alpha.seen, alpha.total) == (1, 4)
    assert alpha.recall == pytest.approx(one / 4, rel=1e-12) and alpha.recall < 0.25


def test_an_exercise_grade_alone_makes_no_question_seen(store, questions, clock):
    """Issue 21: a passing mha.py grade showed "Seen 1, Accuracy —, Recall 71 %" on a topic
    never answered."""
    record_grade(store, exercise="mha", file="mha.py", graded_at=clock(), score=1.0, passed=True,
                 mistakes=(), passed_lessons=["alpha-one"])
    assert store.card("alpha-one") is not None  # the grade did review the card
    alpha = next(t for t in forecast(store, questions, INTERVIEW, clock(), TITLES).topics if t.topic == "alpha")
    assert (alpha.seen, alpha.recall) == (0, None)
    stats = {t.topic: t for t in compute_stats(store, questions, now=clock()).topics}
    assert (stats["alpha"].seen, stats["alpha"].accuracy) == (0, None)
    answer(store, questions, clock, "alpha-many", True)
    assert {t.topic: t.seen for t in compute_stats(store, questions, now=clock()).topics}["alpha"] == 1


def test_interview_practice_asks_the_lowest_predicted_recall_first(store, questions, by_id, clock):
    answer(store, questions, clock, "beta-one", True)
    answer(store, questions, clock, "beta-two", False)
    run = builders.interview(store, questions, on=INTERVIEW, now=clock, rng=random.Random(0))
    unseen = sorted((q for q in questions if q.topic == "alpha"), key=lambda q: q.difficulty)
    assert run.queue == [q.id for q in unseen] + ["beta-two", "beta-one"]
    assert run.mode == "practice" and run.requeue_wrong
    assert builders.interview(store, questions, ["beta"], on=INTERVIEW, now=clock, limit=1).queue == ["beta-two"]


def test_cram_drills_weak_questions_and_leaves_their_cards_alone(store, questions, clock):
    answer(store, questions, clock, "beta-one", True)  # strong: not weak now
    answer(store, questions, clock, "beta-two", False)
    answer(store, questions, clock, "alpha-one", True)
    clock.tick(days=30)  # alpha-one's recall has fallen below 90 %; beta-one answered again just now
    answer(store, questions, clock, "beta-one", True)
    before = {qid: card.to_json() for qid, card in store.cards().items()}
    run = builders.cram(store, questions, now=clock, rng=random.Random(0))
    assert "beta-one" not in run.queue and {"beta-two", "alpha-one", "alpha-many"} <= set(run.queue)
    answered = len(store.answers())
    while (showing := run.next()) is not None:
        clock.tick(5)
        answer_right(run, showing) if showing.number % 2 else answer_wrong(run, showing)
    crammed = store.answers()[answered:]
    assert crammed and {a.mode for a in crammed} == {"cram"} and {a.rating for a in crammed} == {None}
    assert {a.correct for a in crammed} == {True, False}
    assert {qid: card.to_json() for qid, card in store.cards().items()} == before
    for feedback in run.feedback:  # the card's unchanged due date; never scheduled: due now
        card = store.card(feedback.question.id)
        assert feedback.next_due == (card.due if card else feedback.showing.shown_at + timedelta(seconds=5))


def test_settings_persist_and_a_passed_interview_date_is_forgotten(db_path):
    with Store.open(db_path) as store:
        assert store.setting("interview") is None
        save_date(store, INTERVIEW)
        store.set_setting("theme", "textual-light")
        store.set_setting("theme", "textual-dark")
    with Store.open(db_path) as store:
        assert store.setting("theme") == "textual-dark"
        assert saved_date(store, INTERVIEW) == INTERVIEW
        assert saved_date(store, INTERVIEW + timedelta(days=1)) is None
        store.set_setting("interview", "soon")
        assert saved_date(store, INTERVIEW) is None


def test_a_version_3_database_gains_the_settings_table(db_path, questions, clock, monkeypatch):
    monkeypatch.setattr(storefile, "MIGRATIONS", storefile.MIGRATIONS[:3])
    monkeypatch.setattr(storefile, "SCHEMA_VERSION", 3)
    with Store.open(db_path) as old:
        answer(old, questions, clock, "beta-one", True)
    monkeypatch.undo()
    with Store.open(db_path) as store:
        assert store.schema_version() == storefile.SCHEMA_VERSION and store.notices == ()
        assert [a.question_id for a in store.answers()] == ["beta-one"]
        save_date(store, INTERVIEW)
        assert store.setting("interview") == "2025-03-20"


def test_settings_are_copied_out_of_a_damaged_database(db_path):
    from test_store import damage_page, record

    with Store.open(db_path) as store:
        for i in range(300):
            record(store, f"q-{i}", response="x" * 200)
        save_date(store, INTERVIEW)
    for page in (3, 4):  # the two indexes of the answers
        damage_page(db_path, page)
    with Store.open(db_path) as store:
        assert len(store.notices) == 1 and "moved to" in store.notices[0]
        assert store.setting("interview") == "2025-03-20" and len(store.answers()) == 300


def test_exercise_grades_are_copied_out_of_a_damaged_database(db_path):
    from fsrs import Rating
    from test_store import damage_page, record

    with Store.open(db_path) as store:
        for i in range(300):
            record(store, f"q-{i}", response="x" * 200)
        store.record_grade(exercise="mha", file="mha.py", graded_at=datetime(2025, 3, 3, 9, tzinfo=timezone.utc),
                           score=0.5, passed=False, diagnoses="[]", lessons=["q-7"], rating=Rating.Again)
        before = store.grades()
    for page in (3, 4):  # the two indexes of the answers
        damage_page(db_path, page)
    with Store.open(db_path) as store:
        assert len(store.notices) == 1 and "moved to" in store.notices[0]
        assert store.grades() == before and len(before) == 1
