"""The progress pictures' data (issue 35): reviews due until the interview, the share of reviews
recalled each week, and recall per topic on the interview day; then the same data as pygal SVG in
the HTML report and as Plotext/Rich text in `quizprep stats`."""
from __future__ import annotations

import random
import re
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone

from rich.console import Console

from quizprep.study import builders
from quizprep.study.charts import FORECAST_DAYS, progress_charts, weekly_retention
from quizprep.study.interview import save_date
from quizprep.study.report import build_report, render_html, render_markdown
from quizprep.study.rows import Answer
from quizprep.tui.charts import renderables

UTC = timezone.utc
MONDAY = date(2025, 3, 3)


def answer(question: str, day: date, correct: bool | None, score: float | None = None) -> Answer:
    moment = datetime(day.year, day.month, day.day, 12, tzinfo=UTC)
    return Answer(id=0, session_id=None, question_id=question, topic="t", kind="choice", mode="practice",
                  answered_at=moment, elapsed_s=5.0, response="1", seed=None, correct=correct, score=score,
                  rating=None, assessed_at=None)


def test_only_reviews_count_and_each_falls_in_its_monday_to_sunday_week():
    answers = [
        answer("a", MONDAY - timedelta(days=8), True),  # first sight: not a review
        answer("a", MONDAY - timedelta(days=1), False),  # Sunday: last week, forgotten
        answer("a", MONDAY, True),  # this Monday: this week, recalled
        answer("b", MONDAY + timedelta(days=2), True),  # first sight again
        answer("b", MONDAY + timedelta(days=3), None, score=0.75),  # a free response scored 3/4: recalled
        answer("b", MONDAY + timedelta(days=4), None, score=0.25),  # scored 1/4: forgotten
        answer("b", MONDAY + timedelta(days=5), None),  # awaiting its rubric: not counted yet
    ]
    weeks = weekly_retention(answers, MONDAY + timedelta(days=6), 3, UTC)
    assert [w.week for w in weeks] == [MONDAY - timedelta(weeks=2), MONDAY - timedelta(weeks=1), MONDAY]
    assert [(w.reviews, w.recalled) for w in weeks] == [(0, 0), (1, 0), (3, 2)]
    assert weeks[0].rate is None and weeks[2].rate == 2 / 3


def practise(store, questions, clock, answers: int = 4) -> None:
    run = builders.practice(store, questions, ["alpha"], now=clock, rng=random.Random(3), limit=answers)
    for _ in range(answers):
        showing = run.next()
        if showing is None:
            break
        clock.tick(20)
        run.skip(showing)
    run.end()


def test_the_forecast_runs_thirty_days_or_until_the_interview(store, questions, clock):
    practise(store, questions, clock)
    plain = progress_charts(store, questions, clock(), UTC)
    assert len(plain.due) == FORECAST_DAYS and plain.forecast is None
    assert sum(count for _, count in plain.due) == len(store.cards())  # every card is due on some day shown
    save_date(store, clock().date() + timedelta(days=9))
    dated = progress_charts(store, questions, clock(), UTC, {"alpha": "Alpha topic"})
    assert dated.due[0][0] == clock().date() and dated.due[-1][0] == clock().date() + timedelta(days=9)
    assert dated.forecast is not None and [t.title for t in dated.forecast.topics] == ["beta", "Alpha topic"]
    assert "until the interview" in dated.due_title


def test_the_html_report_draws_the_pictures_as_svg_without_scripts_to_load(store, questions, clock):
    practise(store, questions, clock)
    save_date(store, clock().date() + timedelta(days=5))
    report = build_report(store, questions, now=clock(), tz=UTC, titles={"alpha": "Alpha topic"})
    page = render_html(report)
    assert page.count("<svg") == 3 and "<h2>Progress</h2>" in page
    assert "Predicted recall per topic on the interview day" in page and "Alpha topic" in page
    assert not re.search(r"<script[^>]*\bsrc=", page)  # nothing fetched: the page works offline
    assert "<svg" not in render_markdown(report)  # the Markdown report keeps its tables
    assert "<svg" in render_html(replace(report, charts=replace(report.charts, forecast=None)))


def test_stats_text_draws_each_picture_within_the_terminal(store, questions, clock):
    practise(store, questions, clock)
    save_date(store, clock().date() + timedelta(days=5))
    charts = progress_charts(store, questions, clock(), UTC, {"alpha": "Alpha topic"})
    for width in (80, 120):
        console = Console(width=width, record=True, color_system=None)
        for part in renderables(charts, width):
            console.print(part)
        lines = console.export_text().splitlines()
        assert max(len(line) for line in lines) <= width
        assert any("Reviews due each day until the interview" in line for line in lines)
        assert any("Reviews recalled each week" in line for line in lines)
        assert any(line.lstrip().startswith("Alpha topic") and "%" in line for line in lines)
