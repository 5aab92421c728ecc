"""`quizprep quiz` options."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from quizprep.cli import quiz as command

DATA = Path(__file__).parent / "data"


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="quizprep")
    command.register(parser.add_subparsers())
    return parser.parse_args(["quiz", *argv])


def test_options_repeat_and_default():
    args = parse("--topic", "masking", "--topic", "softmax", "--db", "p.db", "--mode", "review")
    assert args.topic == ["masking", "softmax"] and str(args.db) == "p.db" and args.mode == "review"
    assert parse().topic == [] and parse().bank == [] and parse().mode is None


def test_missing_bank_is_a_usage_error(capsys):
    args = parse("--bank", "no/such/bank.yaml")
    assert args.handler(args) == 2
    assert "no such bank file or folder: no/such/bank.yaml" in capsys.readouterr().err


async def test_question_opens_a_session_of_that_one_question(make_app, stored):
    """`quizprep quiz --question ID`: the command line reads the banks and hands them over."""
    from quizprep.bank import load_banks
    from quizprep.tui.screens.feedback import FeedbackScreen
    from quizprep.tui.screens.question import QuestionScreen
    from quizprep.tui.screens.report import ReportScreen

    app = make_app(banks=None, loaded=load_banks([DATA]), question="alpha-numeric")
    async with app.run_test(size=(80, 24)) as pilot:
        assert isinstance(app.screen, QuestionScreen)
        shown = app.screen.showing
        assert shown.question.id == "alpha-numeric" and app.screen.session.total == 1
        await pilot.press(*f"{shown.draw.answer / 2**30:g} gib", "enter")
        assert isinstance(app.screen, FeedbackScreen)
        await pilot.press("enter")
        assert isinstance(app.screen, ReportScreen)
    with stored() as store:
        assert [(a.question_id, a.correct) for a in store.answers()] == [("alpha-numeric", True)]


def test_a_session_of_one_unknown_question_is_refused(tmp_path):
    from quizprep.study.builders import single
    from quizprep.study.store import Store

    with Store.open(tmp_path / "p.sqlite3") as store, pytest.raises(ValueError, match="no question has id 'nope'"):
        single(store, [], "nope")
