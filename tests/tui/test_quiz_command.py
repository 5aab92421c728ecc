"""`quizprep quiz` options."""
from __future__ import annotations

import argparse

from quizprep.tui import command


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
