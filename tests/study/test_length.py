"""A session's length counts the questions it asks for the first time, a mock's follow-ups
among them; a practice session's misses are asked again on top, as Anki counts relearning cards
apart from new ones, and the total it reports is the real one."""
from __future__ import annotations

import random

import pytest

from quizprep.study import builders
from quizprep.study.showing import Tally

from test_session import answer_right, answer_wrong


def asked(run, clock, answer) -> list[str]:
    shown = []
    while (showing := run.next()) is not None:
        if run.length:
            assert run.total == run.length
        assert showing.number <= run.total
        clock.tick(5)
        shown.append(showing.question.id)
        answer(run, showing)
    return shown


@pytest.mark.parametrize("seed", range(6))
def test_a_mocks_follow_ups_count_within_its_length(store, questions, clock, seed):
    run = builders.mock(store, questions, ["alpha"], count=3, now=clock, rng=random.Random(seed))
    shown = asked(run, clock, answer_right)
    assert len(shown) == 3
    if "alpha-many" in shown[:2]:  # its follow-up comes right after it, inside the three
        assert shown[shown.index("alpha-many") + 1] == "alpha-follow"


def test_misses_are_asked_again_after_a_practice_length(store, questions, clock):
    run = builders.practice(store, questions, ["alpha", "beta"], limit=4, now=clock)
    assert run.total == 4
    shown = []
    while (showing := run.next()) is not None:
        assert showing.number == len(shown) + 1 <= run.total
        clock.tick(5)
        shown.append(showing.question.id)
        answer_wrong(run, showing)
    assert run.total == len(shown) == 8
    assert shown[4:] == shown[:4]  # the four planned, then each miss once more
    report = run.report()
    assert set(report.unanswered).isdisjoint(shown)  # the misses are to revisit, not "not answered"


def test_a_miss_asked_again_is_not_also_not_answered(store, questions, clock):
    run = builders.practice(store, questions, ["beta"], now=clock)
    first = run.next()
    clock.tick(5)
    answer_wrong(run, first)
    report = run.end()
    assert first.question.id not in report.unanswered
    assert first.question.id in {f.question.id for f in report.feedback if not f.correct}


def tallies(run, clock, answer) -> list[tuple[int, int, int, int]]:
    seen = []
    while (showing := run.next()) is not None:
        tally = run.tally()
        seen.append((tally.place, tally.planned, tally.again_place, tally.again_planned))
        clock.tick(5)
        answer(run, showing)
    return seen


def test_misses_do_not_grow_the_questions_planned_without_a_length(store, questions, clock):
    """As Anki counts relearning cards apart from new ones: 1/6, 2/6 · 1 again, ..."""
    run = builders.practice(store, questions, ["alpha", "beta"], now=clock)
    planned = run.tally().planned
    seen = tallies(run, clock, answer_wrong)
    first_asks = [(1 + n, planned, 0, n) for n in range(planned)]
    asked_again = [(planned, planned, 1 + n, planned) for n in range(planned)]
    assert seen == first_asks + asked_again


def test_within_a_length_misses_do_not_take_the_planned_questions_places(store, questions, clock):
    """With --length 10 a miss turned "2/10" into "3/9 · 1 again": it took the tenth's place."""
    run = builders.practice(store, questions, ["alpha", "beta"], limit=4, now=clock)
    assert tallies(run, clock, answer_wrong) == [(1, 4, 0, 0), (2, 4, 0, 1), (3, 4, 0, 2), (4, 4, 0, 3),
                                                 *((4, 4, n, 4) for n in range(1, 5))]


def test_an_undone_miss_is_a_first_ask_again(store, questions, clock):
    run = builders.practice(store, questions, ["alpha", "beta"], now=clock)
    planned = run.tally().planned
    first = run.next()
    clock.tick(5)
    run.undo(answer_wrong(run, first))
    again = run.next()
    assert not again.again and run.tally() == Tally(1, planned, 0, 0)
