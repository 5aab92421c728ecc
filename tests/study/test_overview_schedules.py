"""Home's overview counts due cards and mastery from each card's schedule (its due date, stability
and last review, read by SQLite from the card's JSON) instead of decoding every FSRS card: the
figures must be the ones FSRS gives for the whole cards."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from fsrs import Rating
from hypothesis import given, settings
from hypothesis import strategies as st

from quizprep.study.overview import MASTERY_HORIZON, mean, topic_overview
from quizprep.study.scheduling import make_scheduler, scheduled_recall
from quizprep.study import store as store_module
from quizprep.study.rows import SCHEDULE_COLUMNS
from quizprep.study.store import Store
from quizprep.study.storefile import StoreError

START = datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)

# (question, rating or None for an exercise grade that reviews it, hours since the step before)
EVENTS = st.lists(st.tuples(st.integers(0, 5), st.one_of(st.none(), st.sampled_from(list(Rating))),
                            st.floats(0, 24 * 40)), max_size=25)


def record(store: Store, question_id: str, topic: str, rating: Rating | None, at: datetime) -> None:
    if rating is None:  # a failed grade leaves its lesson due at once
        store.record_grade(exercise="softmax", file="f.py", graded_at=at, score=0.0, passed=False,
                           diagnoses="[]", lessons=[question_id], rating=Rating.Again)
        return
    correct = rating != Rating.Again
    store.record_answer(question_id=question_id, topic=topic, kind="choice", mode="practice", response="1",
                        elapsed_s=5.0, answered_at=at, correct=correct, score=float(correct), rating=rating)


@settings(max_examples=40, deadline=None)
@given(events=EVENTS, later_hours=st.floats(0, 24 * 60), fuzzing=st.booleans())
def test_due_counts_and_mastery_agree_with_fsrs_cards(tmp_path_factory, questions, events, later_hours, fuzzing):
    path = tmp_path_factory.mktemp("overview") / "progress.sqlite3"
    moment = START
    with Store.open(path, scheduler=make_scheduler(fuzzing=fuzzing)) as store:
        for index, rating, hours in events:
            moment += timedelta(hours=hours)
            question = questions[index % len(questions)]
            record(store, question.id, question.topic, rating, moment)
        now = moment + timedelta(hours=later_hours)
        cards, last_right = store.cards(), store.latest_correct()
        horizon = now + MASTERY_HORIZON
        overview = {row.topic: row for row in topic_overview(store, questions, now=now)}
        for topic in {q.topic for q in questions}:
            members = [q.id for q in questions if q.topic == topic]
            assert overview[topic].due == sum(qid in cards and cards[qid].due <= now for qid in members)
            expected = mean(store.scheduler.get_card_retrievability(cards[qid], horizon)
                            if qid in cards and last_right.get(qid) else 0.0 for qid in members)
            assert overview[topic].mastery == expected


def test_a_schedule_reads_what_fsrs_reads_of_its_card(store):
    store.record_answer(question_id="q", topic="t", kind="choice", mode="practice", response="1", elapsed_s=5.0,
                        answered_at=START, correct=True, score=1.0, rating=Rating.Good)
    card, schedule = store.card("q"), store.schedules()["q"]
    assert (schedule.due, schedule.stability, schedule.last_review) == (card.due, card.stability, card.last_review)
    later = START + timedelta(days=9)
    assert scheduled_recall(store.scheduler, schedule, later) == store.scheduler.get_card_retrievability(card, later)
    assert 0 < scheduled_recall(store.scheduler, schedule, later) < 1
    assert scheduled_recall(store.scheduler, None, later) == 0.0


def test_garbled_cards_are_left_out_of_the_schedules_as_of_the_cards(store):
    for question_id in ("kept", "bad-json", "bad-stability", "bad-due"):
        store.record_answer(question_id=question_id, topic="t", kind="choice", mode="practice", response="1",
                            elapsed_s=5.0, answered_at=START, correct=True, score=1.0, rating=Rating.Good)
    db = store._db  # the garbling a damaged disk does, written behind the store's back
    db.execute("UPDATE cards SET card = substr(card, 2) WHERE question_id = 'bad-json'")
    db.execute("UPDATE cards SET card = json_set(card, '$.stability', -1.0) WHERE question_id = 'bad-stability'")
    db.execute("UPDATE cards SET due = 'soon' WHERE question_id = 'bad-due'")
    assert set(store.schedules()) == {"kept"}
    assert set(store.cards()) == {"kept"}


def test_a_sqlite_without_json_functions_reads_the_schedules_from_the_cards(store, monkeypatch):
    """SQLite before 3.38 may be built without JSON1: the overview then decodes the whole cards."""
    for question_id, rating in (("easy", Rating.Easy), ("hard", Rating.Hard)):
        store.record_answer(question_id=question_id, topic="t", kind="choice", mode="practice", response="1",
                            elapsed_s=5.0, answered_at=START, correct=True, score=1.0, rating=rating)
    with_json = store.schedules()
    monkeypatch.setattr(store_module, "SCHEDULE_COLUMNS", SCHEDULE_COLUMNS.replace("json_", "no_json_"))
    assert store.schedules() == with_json and set(with_json) == {"easy", "hard"}
    monkeypatch.setattr(store_module, "SCHEDULE_COLUMNS", "question_id FROM no_such_table --")
    with pytest.raises(StoreError):  # anything else SQLite refuses is still the store's error
        store.schedules()
