"""A bank merge keeps the learner's history: answers given under a merged-away id move onto the
question that absorbed it, and its card is rebuilt from them as if they had been given there."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from fsrs import Rating

from quizprep.bank.loader import load_banks
from quizprep.study.scheduling import make_scheduler
from quizprep.study.store import Store

START = datetime(2026, 11, 1, 9, tzinfo=timezone.utc)


def _answer(store: Store, question_id: str, topic: str, minutes: int, rating: Rating) -> None:
    store.record_answer(question_id=question_id, topic=topic, kind="choice", mode="practice", response="1",
                        elapsed_s=3.0, answered_at=START + timedelta(minutes=minutes), rating=rating)


def test_answers_under_a_merged_id_move_to_the_kept_question_with_its_card(tmp_path):
    with Store.open(tmp_path / "merged.sqlite3", scheduler=make_scheduler(fuzzing=False)) as store:
        _answer(store, "scaling-logit-growth", "scaling", 0, Rating.Again)
        _answer(store, "numerics-stability-free", "numerics", 30, Rating.Good)
        assert store.adopt_merged({"scaling-logit-growth": ("numerics-stability-free", "numerics")}) == \
            ["scaling-logit-growth"]
        assert [(a.question_id, a.topic) for a in store.answers()] == [("numerics-stability-free", "numerics")] * 2
        assert store.card("scaling-logit-growth") is None
        with Store.open(tmp_path / "fresh.sqlite3", scheduler=make_scheduler(fuzzing=False)) as fresh:
            _answer(fresh, "numerics-stability-free", "numerics", 0, Rating.Again)
            _answer(fresh, "numerics-stability-free", "numerics", 30, Rating.Good)
            assert store.card("numerics-stability-free").to_json() == fresh.card("numerics-stability-free").to_json()
        assert store.adopt_merged({"scaling-logit-growth": ("numerics-stability-free", "numerics")}) == []


def test_the_shipped_banks_name_the_kept_question_and_its_topic_for_each_merged_id():
    merged = load_banks().merged()
    assert merged["scaling-logit-growth"] == ("numerics-stability-free", "numerics")
    assert merged["kv-cache-offset-mask-code"] == ("masking-kv-cache-offset", "masking")  # issue 33
    # issue 33's overlap clusters kept 17 more ids as aliases of the question now holding their fact
    assert merged["gqa-which-kv-head"] == ("gqa-head-mapping", "gqa")
    assert len(merged) == 23 and all(kept != old for old, (kept, _) in merged.items())
