"""The report's fuller sections (issue 21, item 8): the interview date with predicted recall,
exercise grades, mock interviews, missed multiple-choice answers (picked against right), and a
skipped numeric answer said as skipped, not an empty "answered:". Markdown and HTML snapshots
(update with `pytest tests/study/test_report_sections.py --snapshot-update`)."""
from __future__ import annotations

import random
from datetime import date, timezone

import pytest

from quizprep.study import builders
from quizprep.study.grades import NamedMistake, record_grade
from quizprep.study.interview import save_date
from quizprep.study.report import build_report, render_html, render_markdown

UTC = timezone.utc
TITLES = {"alpha": "Alpha topic", "beta": "Beta topic"}


@pytest.fixture
def report(store, questions, clock):
    """A practice session (a wrong pick, a skipped numeric), a mock round, two grades and an
    interview date, as one learner's evening."""
    run = builders.practice(store, questions, ["alpha"], now=clock, rng=random.Random(5))
    run.queue = ["alpha-many", "alpha-numeric"]
    clock.tick(8)
    run.answer_choice(run.next(), [0, 1])  # first and second; right is first and third
    clock.tick(30)
    run.skip(run.next())
    run.end()
    clock.tick(minutes=5)
    mock = builders.mock(store, questions, ["beta"], count=2, minutes=5, now=clock, rng=random.Random(2))
    clock.tick(20)
    mock.answer_choice(mock.next(), [0])  # the bank's first choice: wrong for beta-two
    clock.tick(20)
    mock.skip(mock.next())
    mock.end()
    split = NamedMistake("split-no-transpose", "heads split with a reshape but no transpose", "alpha-one")
    record_grade(store, exercise="mha", file="mha.py", graded_at=clock.tick(60), score=0.5, passed=False,
                 mistakes=[split], passed_lessons=[])
    record_grade(store, exercise="softmax", file="softmax.py", graded_at=clock.tick(60), score=1.0, passed=True,
                 mistakes=(), passed_lessons=["beta-one"])
    save_date(store, date(2025, 3, 20))
    return build_report(store, questions, now=clock.tick(60), tz=UTC, titles=TITLES)


def test_the_report_has_readiness_exercises_mocks_and_missed_choices(report):
    assert report.forecast is not None and report.forecast.on == date(2025, 3, 20)
    alpha = next(t for t in report.forecast.topics if t.topic == "alpha")
    assert (alpha.seen, alpha.total) == (2, 4)  # the grade on alpha-one alone does not make it seen
    assert [(e.exercise, e.passed) for e in report.stats.exercises] == [("mha", False), ("softmax", True)]
    assert [(m.answers, m.skipped) for m in report.mocks] == [(2, 1)]
    assert [(m.question_id, m.picked, m.right) for m in report.choice_misses] == [
        ("beta-two", ("yes",), ("no",)),  # the mock's, newest first
        ("alpha-many", ("first", "second"), ("first", "third"))]
    text = render_markdown(report)
    assert "streak 1 day." in text  # not "1 day(s)"
    assert "Interview on 2025-03-20 (in 17 days)" in text and "| Alpha topic | 2 of 4 |" in text
    assert "| mha | 2025-03-03 09:07 | 50% | heads split with a reshape but no transpose |" in text
    assert "- picked: first; second\n- right: first; third" in text
    assert '- answered: skipped ("I don\'t know")' in text and "- answered: \n" not in text


def test_a_mock_round_ended_early_is_scored_over_all_its_questions(store, questions, clock):
    mock = builders.mock(store, questions, ["alpha", "beta"], count=4, minutes=10, now=clock, rng=random.Random(3))
    showing = mock.next()
    assert showing.question.kind == "choice"  # this seed's first question
    mock.answer_choice(showing, sorted(showing.question.correct_indices))  # right: 100 % over one answer
    planned = mock.total
    mock.end()  # three or more questions never reached
    report = build_report(store, questions, now=clock.tick(60), tz=UTC)
    [result] = report.mocks
    assert (result.answers, result.questions) == (1, planned) and planned >= 4
    assert result.score == pytest.approx(1 / planned)
    assert f"| 1 of {planned} | {1 / planned:.0%} |" in render_markdown(report)


def test_without_a_date_or_grades_the_report_says_so(store, questions, clock):
    text = render_markdown(build_report(store, questions, now=clock(), tz=UTC))
    assert "No interview date set" in text and "None graded yet." in text and "## Mock interviews\n\nNone yet." in text


def test_markdown_report_snapshot(report, snapshot):
    assert render_markdown(report) == snapshot


def test_html_report_snapshot(report, snapshot):
    assert render_html(report) == snapshot
