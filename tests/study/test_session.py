from __future__ import annotations

import random
from datetime import timedelta

import pytest
from fsrs import Rating

from quizprep.study import rubric
from quizprep.study import builders
from quizprep.study.session import InputError


def answer_right(run, showing):
    question = showing.question
    if question.kind == "choice":
        return run.answer_choice(showing, question.correct_indices)
    if question.kind == "numeric":
        return run.answer_numeric(showing, str(showing.draw.answer))
    return run.assess(run.answer_free(showing, "an answer"), [True] * len(question.rubric))


def answer_wrong(run, showing):
    question = showing.question
    if question.kind == "choice":
        wrong = next(i for i in range(len(question.choices)) if i not in question.correct_indices)
        return run.answer_choice(showing, [wrong])
    if question.kind == "numeric":
        return run.answer_numeric(showing, str(showing.draw.answer * 3))
    return run.assess(run.answer_free(showing, "a poor answer"), [False] * len(question.rubric))


def drain(run, clock, answer=answer_right, seconds=5):
    shown = []
    while (showing := run.next()) is not None:
        clock.tick(seconds)
        shown.append(showing.question.id)
        answer(run, showing)
    return shown


# -- choice ----------------------------------------------------------------------------------

def test_multiple_choice_is_right_only_with_exactly_the_correct_set(store, questions, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock, rng=random.Random(0))
    verdicts = {}
    for picked in ([0], [0, 2], [0, 1, 2]):
        run.queue.insert(0, "alpha-many")
        showing = run.next()
        verdicts[tuple(picked)] = run.answer_choice(showing, picked).correct
    assert verdicts == {(0,): False, (0, 2): True, (0, 1, 2): False}
    assert [a.response for a in store.answers(question_id="alpha-many")] == ["1", "1,3", "1,2,3"]


@pytest.mark.parametrize("picked", [[], [5], [-1]])
def test_impossible_picks_are_refused_and_not_recorded(store, questions, clock, picked):
    run = builders.practice(store, questions, ["beta"], now=clock)
    showing = run.next()
    with pytest.raises(InputError):
        run.answer_choice(showing, picked)
    assert store.answers() == []
    assert run.answer_choice(showing, showing.question.correct_indices).correct


def test_a_showing_is_answered_once(store, questions, clock):
    run = builders.practice(store, questions, ["beta"], now=clock)
    showing = run.next()
    run.answer_choice(showing, [0])
    with pytest.raises(ValueError, match="already been answered"):
        run.answer_choice(showing, [1])
    assert len(store.answers()) == 1


def test_right_but_slow_is_hard_and_fast_is_good(store, questions, clock):
    run = builders.practice(store, questions, ["beta"], now=clock)
    first = run.next()  # beta-one, difficulty 1: slow after 30 s
    clock.tick(31)
    slow = run.answer_choice(first, first.question.correct_indices)
    second = run.next()  # beta-two, difficulty 3: slow after 60 s
    clock.tick(31)
    fast = run.answer_choice(second, second.question.correct_indices)
    assert (slow.question.id, slow.rating, slow.slow, slow.elapsed_s) == ("beta-one", Rating.Hard, True, 31)
    assert (fast.question.id, fast.rating, fast.slow) == ("beta-two", Rating.Good, False)
    assert [a.rating for a in store.answers()] == [Rating.Hard, Rating.Good]


# -- numeric ---------------------------------------------------------------------------------

def test_numeric_draws_fresh_numbers_each_showing_and_records_the_seed(store, questions, by_id, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock, rng=random.Random(7))
    run.queue = ["alpha-numeric"] * 6
    draws = []
    while (showing := run.next()) is not None:
        draws.append(showing.draw)
        assert showing.prompt == f"Bytes for {showing.draw.values['n']:,} fp16 values?"
        feedback = run.answer_numeric(showing, f"{2 * showing.draw.values['n']} B")
        assert feedback.correct and feedback.verdict.correct
        assert feedback.worked[-1].startswith("answer = 2 × n = 2 × ")
    answers = store.answers(question_id="alpha-numeric")
    assert [a.seed for a in answers] == [d.seed for d in draws]
    assert len({d.values["n"] for d in draws}) > 1, "every showing should draw again"
    for answer, original in zip(answers, draws):
        assert builders.reproduce_draw(by_id["alpha-numeric"], answer).values == original.values


def test_unreadable_number_is_refused_without_recording(store, questions, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock)
    run.queue = ["alpha-numeric"]
    showing = run.next()
    for text in ("about twelve", "3 FLOP", ""):
        with pytest.raises(InputError):
            run.understand(showing, text)
        with pytest.raises(InputError):
            run.answer_numeric(showing, text)
    assert store.answers() == []
    assert "2,048 B" in run.understand(showing, "2 KiB")  # n ≤ 1000, so 2 KiB is always wrong
    wrong = run.answer_numeric(showing, "2 KiB")
    assert wrong.correct is False and wrong.rating == Rating.Again and len(store.answers()) == 1


# -- free response ---------------------------------------------------------------------------

def test_free_response_is_committed_before_the_self_assessment(store, questions, by_id, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock)
    run.queue = ["alpha-follow"]
    showing = run.next()
    clock.tick(40)
    pending = run.answer_free(showing, "Because of variance.")
    (stored,) = store.answers()
    assert (stored.response, stored.elapsed_s, stored.assessed) == ("Because of variance.", 40, False)
    assert store.card("alpha-follow") is None
    with pytest.raises(InputError):
        run.assess(pending, [True, True])  # three rubric items
    feedback = run.assess(pending, [True, False, True])  # weights 2, 1, 1
    assert feedback.score == 0.75 and feedback.rating == Rating.Good and feedback.correct
    assert [item.criterion for item in feedback.missed] == ["gives an example"]
    assert store.answers()[0].score == 0.75 and store.card("alpha-follow") is not None


def test_empty_free_response_is_refused(store, questions, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock)
    run.queue = ["alpha-follow"]
    with pytest.raises(InputError):
        run.answer_free(run.next(), "   ")
    assert store.answers() == []


def test_unassessed_answer_from_a_closed_session_can_be_finished(store, questions, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock)
    run.queue = ["alpha-follow"]
    run.answer_free(run.next(), "Written, then the app closed.")
    (pending,) = builders.unassessed(store, questions)
    assert pending.response == "Written, then the app closed." and pending.question.id == "alpha-follow"
    feedback = rubric.assess_answer(store, pending, [False, False, True], clock())
    assert feedback.score == 0.25 and feedback.rating == Rating.Again and not feedback.correct
    assert builders.unassessed(store, questions) == []


# -- queues ----------------------------------------------------------------------------------

def test_practice_order_due_then_new_easiest_first_then_later(store, questions, clock):
    run = builders.practice(store, questions, ["alpha"], now=clock)
    run.queue = ["alpha-one", "alpha-numeric"]
    answer_wrong(run, run.next())  # Again: due in 10 minutes
    answer_right(run, run.next())  # Good: due in 2 days
    clock.tick(minutes=11)
    order = builders.practice(store, questions, ["alpha"], now=clock).queue
    # alpha-one is due; alpha-many (difficulty 2) and alpha-follow (3) are new; alpha-numeric not yet due
    assert order == ["alpha-one", "alpha-many", "alpha-follow", "alpha-numeric"]


def test_practice_brings_a_wrong_answer_back_once(store, questions, clock):
    run = builders.practice(store, questions, ["beta"], now=clock)
    assert drain(run, clock, answer_wrong) == ["beta-one", "beta-two", "beta-one", "beta-two"]


def test_review_serves_only_due_cards_oldest_first(store, questions, clock):
    run = builders.practice(store, questions, ["beta"], now=clock)
    run.requeue_wrong = False
    drain(run, clock, answer_wrong)  # both Again: beta-one due 10 min after, beta-two 10 min after it
    assert builders.review(store, questions, now=clock).queue == []  # nothing due yet
    clock.tick(minutes=10)
    assert builders.review(store, questions, now=clock).queue == ["beta-one", "beta-two"]
    assert builders.review(store, questions, ["alpha"], now=clock).queue == []


def test_unknown_topic_is_an_error(store, questions):
    with pytest.raises(ValueError, match="gamma"):
        builders.practice(store, questions, ["gamma"])


# -- mock interview --------------------------------------------------------------------------

def test_mock_mixes_topics_and_chains_follow_ups(store, questions, clock):
    run = builders.mock(store, questions, count=4, now=clock, rng=random.Random(3))
    assert "alpha-follow" not in run.queue  # a follow-up never opens while others are left
    topics = [run.questions[qid].topic for qid in run.queue]
    assert sorted(topics) == ["alpha", "alpha", "beta", "beta"]
    assert topics[0] != topics[1] and topics[2] != topics[3]  # topics take turns
    shown = []
    while (showing := run.next()) is not None:
        shown.append((showing.question.id, showing.follow_up_of))
        clock.tick(20)
        answer_right(run, showing)
    many = [qid for qid, _ in shown].index("alpha-many")
    assert shown[many + 1] == ("alpha-follow", "alpha-many")
    assert len(shown) == 4  # the follow-up takes one of the four places (issue 21: length means length)


def test_mock_moves_a_follow_up_queued_for_later_right_after_its_parent(store, questions, clock):
    run = builders.mock(store, questions, count=4, now=clock, rng=random.Random(3))
    run.queue = ["alpha-many", "alpha-one", "alpha-follow"]
    answer_right(run, run.next())
    follow_up = run.next()
    assert (follow_up.question.id, follow_up.follow_up_of) == ("alpha-follow", "alpha-many")
    assert run.queue == ["alpha-one"]


def test_mock_stops_when_time_is_up_and_reports(store, questions, clock):
    run = builders.mock(store, questions, ["alpha"], count=4, minutes=1, now=clock, rng=random.Random(0))
    run.queue = ["alpha-many", "alpha-one", "alpha-numeric"]
    assert run.remaining_time() == timedelta(minutes=1)
    clock.tick(20)
    answer_right(run, run.next())  # alpha-many, then its follow-up is chained in
    follow = run.next()
    assert follow.question.id == "alpha-follow"
    clock.tick(30)
    run.assess(run.answer_free(follow, "partly"), [True, False, False])  # 2 of 4
    clock.tick(15)
    assert run.remaining_time() == timedelta(0) and run.finished
    assert run.next() is None
    report = run.end()
    assert report.out_of_time and report.unanswered == ("alpha-one", "alpha-numeric")
    (alpha,) = report.topics
    assert (alpha.topic, alpha.answered, alpha.fraction) == ("alpha", 2, 0.75)
    assert report.missed == (("alpha-follow", "gives an example"), ("alpha-follow", "names the pitfall"))
    assert {a.mode for a in store.answers()} == {"mock"}
    assert {a.session_id for a in store.answers()} == {run.session_id}


def test_report_counts_a_shown_but_unanswered_question(store, questions, clock):
    run = builders.practice(store, questions, ["beta"], now=clock)
    run.next()
    report = run.end()
    assert report.unanswered == ("beta-one", "beta-two") and report.topics == ()
    assert run.next() is None


def test_a_mock_ended_early_is_scored_over_the_whole_round(store, questions, clock):
    """The questions a round did not reach count as missed, as in an interview; the answers
    given keep their own score beside."""
    run = builders.mock(store, questions, count=4, now=clock, rng=random.Random(3))
    clock.tick(20)
    answer_right(run, run.next())
    report = run.end()
    assert (report.round_size, report.score, report.round_score) == (4, 1.0, 0.25)
    practice = builders.practice(store, questions, ["beta"], now=clock)
    clock.tick(20)
    answer_right(practice, practice.next())
    report = practice.end()
    assert (report.round_size, report.score, report.round_score) == (None, 1.0, 1.0)  # a practice stops where it likes
