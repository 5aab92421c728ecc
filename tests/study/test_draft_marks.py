"""A choice's picks and a free answer's rubric ticks are kept with its draft, and read back only
while they still fit the question (its bank may have changed since), never from garbled JSON."""
from __future__ import annotations

import json
import random
import sqlite3

import pytest

from quizprep.study import builders
from quizprep.study.drafts import shown_with


def asked(store, questions, clock, question_id, seed=1):
    run = builders.practice(store, [q for q in questions if q.id == question_id], now=clock, rng=random.Random(seed))
    return run, run.next()


def test_a_pick_kept_comes_back_with_its_order_in_a_new_session(store, questions, clock):
    run, first = asked(store, questions, clock, "alpha-many")
    run.keep_draft(first, "", {1})
    _, second = asked(store, questions, clock, "alpha-many", seed=99)
    assert (second.choice_order, second.picked) == (first.choice_order, {1})


def test_nothing_picked_drops_the_draft(store, questions, clock):
    run, first = asked(store, questions, clock, "alpha-many")
    run.keep_draft(first, "", {1})
    run.keep_draft(first, "", ())
    assert store.draft_marks("alpha-many") == ""


@pytest.mark.parametrize("marks", [
    "not json", "[1, 2]", '{"choice_order": [0, 0, 1], "picked": [0]}', '{"choice_order": [0, 1, 2], "picked": [7]}',
    '{"choice_order": [0, 1, 2], "picked": "0"}', '{"picked": [0]}',
])
def test_marks_garbled_or_no_longer_fitting_are_left_out(store, questions, clock, db_path, marks):
    run, first = asked(store, questions, clock, "alpha-many")
    run.keep_draft(first, "", {1})
    with sqlite3.connect(db_path) as raw:
        raw.execute("UPDATE drafts SET marks = ?", (marks,))
    _, second = asked(store, questions, clock, "alpha-many", seed=99)
    assert second.picked == frozenset()
    assert second.choice_order == asked(store, questions, clock, "alpha-many", seed=99)[1].choice_order


def test_ticks_count_only_for_a_rubric_of_their_length(by_id):
    free = by_id["alpha-follow"]
    fitting = [True] + [False] * (len(free.rubric) - 1)
    assert shown_with(free, json.dumps({"ticked": fitting})) == {"ticked": tuple(fitting)}
    assert shown_with(free, json.dumps({"ticked": fitting + [True]})) == {}
    assert shown_with(free, json.dumps({"ticked": [1] * len(free.rubric)})) == {}
