"""Skipping a question, editing a rubric self-assessment, and choices shown in a fresh order."""
from __future__ import annotations

import random
from datetime import timedelta

import pytest
from fsrs import Rating

from quizprep.bank import load_banks
from quizprep.study import session
from quizprep.study import builders
from quizprep.study.scheduling import make_scheduler
from quizprep.study.store import Store


def showing_of(run, question_id):
    run.queue.insert(0, question_id)
    return run.next()


# -- skip ------------------------------------------------------------------------------------

@pytest.mark.parametrize("question_id", ["alpha-one", "alpha-numeric", "alpha-follow"])
def test_a_skip_is_recorded_as_a_wrong_answer_rated_again(store, questions, clock, question_id):
    run = builders.practice(store, questions, ["alpha"], now=clock)
    run.queue = []
    showing = showing_of(run, question_id)
    clock.tick(3)
    feedback = run.skip(showing)
    (answer,) = store.answers()
    assert (answer.response, answer.correct, answer.score, answer.rating) == ("", False, 0.0, Rating.Again)
    assert feedback.skipped and not feedback.correct and feedback.rating == Rating.Again
    assert feedback.next_due == store.card(question_id).due < clock() + timedelta(hours=1)
    assert builders.unassessed(store, questions) == []  # a skipped free answer awaits no rubric
    assert run.queue == [question_id]  # practice brings it back once, as for a wrong answer


def test_a_skipped_numeric_question_shows_its_worked_steps(store, questions, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock, rng=random.Random(3))
    showing = showing_of(run, "alpha-numeric")
    feedback = run.skip(showing)
    assert feedback.worked and str(showing.draw.answer) in "".join(feedback.worked).replace(",", "")
    with pytest.raises(ValueError, match="already been answered"):
        run.skip(showing)


def test_a_skipped_free_question_misses_every_rubric_item(store, questions, by_id, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock)
    feedback = run.skip(showing_of(run, "alpha-follow"))
    assert feedback.missed == by_id["alpha-follow"].rubric
    assert run.report().missed == tuple(("alpha-follow", item.criterion) for item in by_id["alpha-follow"].rubric)


# -- reassess --------------------------------------------------------------------------------

def assessed(store, questions, clock, met):
    run = builders.practice(store, questions, ["alpha"], now=clock)
    pending = run.answer_free(showing_of(run, "alpha-follow"), "my answer")
    clock.tick(30)
    return run, run.assess(pending, met)


def test_reassessing_replaces_the_score_and_rebuilds_the_card(tmp_path, questions, clock):
    start = clock()
    with Store.open(tmp_path / "edited.db", scheduler=make_scheduler(fuzzing=False)) as edited:
        run, first = assessed(edited, questions, clock, [False, False, False])
        assert first.rating == Rating.Again
        clock.tick(60)
        changed = run.reassess(first, [True, True, True])
        edited_card = edited.card("alpha-follow")
        marks = [mark.met for mark in edited.rubric_marks(first.answer_id)]
        (answer,) = edited.answers()
    clock.now = start
    with Store.open(tmp_path / "direct.db", scheduler=make_scheduler(fuzzing=False)) as direct:
        _, straight = assessed(direct, questions, clock, [True, True, True])
        direct_card = direct.card("alpha-follow")
    assert (changed.score, changed.rating, changed.correct) == (1.0, Rating.Easy, True)
    assert run.feedback == [changed] and run.report().missed == ()
    assert marks == [True, True, True] and (answer.score, answer.rating) == (1.0, Rating.Easy)
    # As if the learner had ticked the whole rubric the first time.
    assert edited_card.to_json() == direct_card.to_json()
    assert changed.next_due == straight.next_due == direct_card.due


def test_only_a_free_answer_of_this_session_can_be_reassessed(store, questions, clock):
    run, free = assessed(store, questions, clock, [True, False, False])
    choice = run.answer_choice(showing_of(run, "alpha-one"), [0])
    with pytest.raises(ValueError, match="free answer"):
        run.reassess(choice, [True])
    other = builders.practice(store, questions, ["alpha"], now=clock)
    with pytest.raises(ValueError, match="free answer"):
        other.reassess(free, [True, True, True])
    with pytest.raises(session.InputError):
        run.reassess(free, [True])
    assert [mark.met for mark in store.rubric_marks(free.answer_id)] == [True, False, False]


# -- choice order ----------------------------------------------------------------------------

def test_choices_are_shown_in_a_fresh_order_but_judged_by_original_index(store, questions, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock, rng=random.Random(1))
    orders = set()
    for _ in range(20):
        showing = showing_of(run, "alpha-many")
        assert sorted(showing.choice_order) == [0, 1, 2]
        orders.add(showing.choice_order)
        assert run.answer_choice(showing, {0, 2}).correct
    assert len(orders) > 1
    assert {a.response for a in store.answers()} == {"1,3"}


def test_a_bank_can_keep_the_written_order(tmp_path, store, clock):
    bank = tmp_path / "fixed.yaml"
    bank.write_text("""\
topic: fixed
title: Fixed
questions:
  - id: fixed-order
    kind: choice
    difficulty: 1
    tags: []
    prompt: Which hold?
    explanation: Both of the first two.
    references: [test]
    shuffle: false
    choices:
      - {text: "x", why: "no"}
      - {text: "y", why: "no"}
      - {text: "All of the above", correct: true, why: "yes"}
""")
    loaded = load_banks([bank])
    assert not loaded.errors and loaded.questions[0].shuffle is False
    run = builders.practice(store, loaded.questions, now=clock, rng=random.Random(0))
    orders = {showing_of(run, "fixed-order").choice_order for _ in range(10)}
    assert orders == {(0, 1, 2)}


def test_reassessing_a_crammed_answer_leaves_the_schedule_alone(tmp_path, questions, clock):
    random.seed(5)  # fsrs fuzzes intervals with the global generator: a rebuilt card would differ
    with Store.open(tmp_path / "p.db", scheduler=make_scheduler(fuzzing=True)) as store:
        for _ in range(3):
            clock.now = assessed(store, questions, clock, [True] * 3)[1].next_due
        before = store.card("alpha-follow").to_json()
        cram = builders.cram(store, questions, now=clock)
        pending = cram.answer_free(showing_of(cram, "alpha-follow"), "crammed")
        crammed = cram.reassess(cram.assess(pending, [False] * 3), [True, True, False])
        assert store.card("alpha-follow").to_json() == before
        assert crammed.score == 0.75 and crammed.next_due == store.card("alpha-follow").due
        assert [mark.met for mark in store.rubric_marks(crammed.answer_id)] == [True, True, False]


def test_a_reassessment_decides_whether_practice_asks_it_again(store, questions, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock)
    run.queue = ["alpha-follow", "alpha-one"]
    failed = run.assess(run.answer_free(run.next(), "my answer"), [False, False, False])
    assert run.queue == ["alpha-one", "alpha-follow"]  # a wrong answer comes back at the end
    passed = run.reassess(failed, [True, True, False])
    assert run.queue == ["alpha-one"]
    run.reassess(passed, [False, False, True])
    assert run.queue == ["alpha-one", "alpha-follow"]
