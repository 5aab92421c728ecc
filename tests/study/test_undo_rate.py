"""Undo (take the last answer back) and the learner's own rating: the store and the FSRS card
end exactly as if the answer had never been given, or had been given that rating."""
from __future__ import annotations

import pytest
from fsrs import Rating

from quizprep.study import builders
from quizprep.study.scheduling import make_scheduler
from quizprep.study.store import Store

from test_session import answer_right, answer_wrong


def test_a_manual_rating_rebuilds_the_card_as_if_answered_with_it(store, questions, clock, tmp_path):
    run = builders.practice(store, questions, ["alpha"], now=clock)
    showing = run.next()
    clock.tick(5)
    wrong = answer_wrong(run, showing)
    assert wrong.rating == Rating.Again
    clock.tick(30)
    easy = run.rate(wrong, Rating.Easy)
    assert (easy.rating, run.feedback) == (Rating.Easy, [easy])
    assert [a.rating for a in store.answers()] == [Rating.Easy]
    # The same answer recorded with Easy in a fresh store gives the very same card.
    with Store.open(tmp_path / "fresh.sqlite3", scheduler=make_scheduler(fuzzing=False)) as fresh:
        fresh.record_answer(question_id=showing.question.id, topic="alpha", kind=showing.question.kind,
                            mode="practice", response="x", elapsed_s=5.0,
                            answered_at=store.answers()[0].answered_at, rating=Rating.Easy)
        assert fresh.card(showing.question.id).to_json() == store.card(showing.question.id).to_json()
    assert easy.next_due == store.card(showing.question.id).due


def test_undo_takes_the_answer_back_and_asks_the_question_again(store, questions, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock)
    first = run.next()
    clock.tick(5)
    answer_right(run, first)
    card_before = store.card(first.question.id).to_json()
    second = run.next()
    clock.tick(5)
    given = answer_wrong(run, second)
    run.undo(given)
    assert [a.question_id for a in store.answers()] == [first.question.id]
    assert store.card(second.question.id) is None  # never answered before: no card again
    assert store.card(first.question.id).to_json() == card_before
    again = run.next()
    assert (again.question.id, again.number) == (second.question.id, 2)
    assert [f.question.id for f in run.report().feedback] == [first.question.id]
    assert second.question.id not in run.queue  # asked once more, not twice


def test_only_the_last_answer_can_be_undone(store, questions, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock)
    first = answer_right(run, run.next())
    answer_right(run, run.next())
    with pytest.raises(ValueError, match="last answer"):
        run.undo(first)
    assert len(store.answers()) == 2


def test_a_choice_question_taken_back_is_asked_again_in_the_same_order(store, questions, clock):
    """Issue 32, item 3: reshuffled, the number key learned for a choice picked another one."""
    import random

    for seed in range(8):
        run = builders.practice(store, questions, ["alpha"], now=clock, rng=random.Random(seed))
        showing = run.next()
        while showing.question.kind != "choice" or not showing.question.shuffle:
            answer_right(run, showing)
            showing = run.next()
        run.undo(answer_wrong(run, showing))
        again = run.next()
        assert again.question.id == showing.question.id
        assert again.choice_order == showing.choice_order, seed
        run.undo(answer_wrong(run, again))


def test_undo_from_the_next_question_asks_the_answered_one_then_the_shown_one(store, questions, clock):
    """Anki's Ctrl+Z on the next card: the answer before the question shown is taken back."""
    run = builders.practice(store, questions, ["alpha"], now=clock)
    first = run.next()
    card_before = store.card(first.question.id)
    given = answer_wrong(run, first)
    second = run.next()
    assert run.undo_before(second) == given
    assert store.answers() == [] and store.card(first.question.id) == card_before
    again = run.next()
    assert (again.question.id, again.number) == (first.question.id, 1)
    answer_right(run, again)
    after = run.next()
    assert (after.question.id, after.number) == (second.question.id, 2)
    assert [f.question.id for f in run.feedback] == [first.question.id]


def test_undo_from_the_first_question_has_nothing_to_take_back(store, questions, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock)
    first = run.next()
    with pytest.raises(ValueError, match="no answer in this session"):
        run.undo_before(first)
    assert run.current is first
    answer_right(run, first)  # still the question to answer


def test_undo_from_the_next_question_skips_no_free_answer_left_for_later(store, by_id, clock):
    """A free answer whose rubric was left for later is the last answer: the one before it
    cannot be taken back in its place."""
    from quizprep.study.session import Session

    run = Session(store, "practice", by_id, ["alpha-one", "alpha-follow", "alpha-numeric"], now=clock)
    answer_right(run, run.next())
    run.answer_free(run.next(), "an answer")  # its rubric left for later
    following = run.next()
    with pytest.raises(ValueError, match="alpha-follow awaits its rubric"):
        run.undo_before(following)
    assert len(store.answers()) == 2 and run.current is following


def test_a_mock_rounds_answers_stand(store, questions, clock):
    run = builders.mock(store, questions, ["alpha"], now=clock, count=3, minutes=10)
    answer_right(run, run.next())
    shown = run.next()
    with pytest.raises(ValueError, match="mock"):
        run.undo_before(shown)
    assert len(store.answers()) == 1
