"""Daily limits in the quiz app: given once on the command line, kept in the progress store,
and when they leave nothing to ask, said so with the time of the next review."""
from __future__ import annotations

import argparse

import pytest

from choices import keys_for
from quizprep.study.limits import DailyLimits, read_limits
from quizprep.cli import quiz as command
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.question import QuestionScreen

SIZE = (80, 24)


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="quizprep")
    command.register(parser.add_subparsers())
    return parser.parse_args(["quiz", *argv])


def test_the_limits_options_take_a_count_or_none_and_default_to_keeping_the_saved_ones(capsys):
    args = parse("--new-per-day", "20", "--reviews-per-day", "none")
    assert (args.new_per_day, args.reviews_per_day) == (20, None)
    assert parse().new_per_day is command.KEEP
    with pytest.raises(SystemExit):
        parse("--new-per-day", "-3")
    assert "not a whole number of 0 or more" in capsys.readouterr().err


async def test_a_new_limit_given_once_is_kept_and_stops_practice_with_the_next_review(make_app, stored, clock):
    app = make_app(mode="practice", topics=["alpha"], daily_limits={"new": 1})
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, QuestionScreen) and app.screen.session.total == 1
        await pilot.press(*keys_for(app, 2), "enter")  # wrong: due again in minutes
        assert isinstance(app.screen, FeedbackScreen)
        await pilot.press("escape", "enter")  # end the session (the miss would come back), then Home
        assert isinstance(app.screen, HomeScreen)
        question = app.store.answers()[0].question_id
    assert read_limits(stored()) == DailyLimits(new=1)

    clock.advance(seconds=30)
    app = make_app(mode="practice", topics=["alpha"])  # a later run: the saved limit applies
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen)
        due = app.store.card(question).due
        minutes = round((due - clock()).total_seconds() / 60)
        assert any(f"Today's new limit (1) is reached. Next review in {minutes} min." == n.message
                   for n in app._notifications)


async def test_interview_practice_keeps_the_daily_limits(make_app, clock):
    """With an interview date, --new-per-day was ignored: practice asked every weak question."""
    from datetime import date

    app = make_app(mode="practice", topics=["alpha"], daily_limits={"new": 1},
                   interview=date(2025, 4, 1))
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, QuestionScreen) and app.screen.session.total == 1
        answered = app.screen.showing.question.id
        await pilot.press(*keys_for(app, 1), "enter", "escape")
    clock.advance(seconds=30)
    again = make_app(mode="practice", topics=["alpha"], interview=date(2025, 4, 1))
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()  # no new question today: only the one answered, as a review
        assert isinstance(again.screen, QuestionScreen) and again.screen.session.total == 1
        assert again.screen.showing.question.id == answered


async def test_review_under_limits_names_only_the_review_limit(make_app, clock):
    """A review session asks no new question: a used-up new limit is not why it is empty."""
    app = make_app(mode="practice", topics=["alpha"], daily_limits={"new": 1, "reviews": 5})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*keys_for(app, 1), "enter", "escape")
    review = make_app(mode="review", topics=["alpha"])
    async with review.run_test(size=SIZE) as pilot:
        await pilot.pause()
        messages = [n.message for n in review._notifications]
        assert any(m.startswith("Nothing is due for review now.") for m in messages), messages
        assert not any("new limit" in m for m in messages), messages
