"""Issue 24: every command that reads or writes the progress database takes one and the same
`--db` option (quizprep.cli.options): a Path, metavar FILE, help naming $QUIZPREP_DB."""
from __future__ import annotations

import argparse
from pathlib import Path

from quizprep import cli

COMMANDS_WITH_DB = {"quiz", "grade", "check", "stats", "report", "flags", "serve"}


def db_options() -> dict[str, argparse.Action]:
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: action for name, command in subparsers.choices.items()
            for action in command._actions if "--db" in action.option_strings}


def test_every_command_with_a_database_has_the_one_db_option() -> None:
    options = db_options()
    assert options.keys() == COMMANDS_WITH_DB
    for name, action in options.items():
        assert action.type is Path and action.metavar == "FILE", name
        assert "$QUIZPREP_DB" in action.help and "user data folder" in action.help, name


def test_the_db_value_is_a_path_for_every_command(tmp_path: Path) -> None:
    parser = cli.build_parser()
    given = tmp_path / "p.sqlite3"
    for argv in (["quiz"], ["grade", "x.py"], ["check"], ["stats"], ["report", "--out", "r.md"], ["flags"],
                 ["serve"]):
        assert parser.parse_args([*argv, "--db", str(given)]).db == given, argv
