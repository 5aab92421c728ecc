"""End to end: `quizprep grade` on code with a named bug makes the question that teaches it due,
and the quiz app's review asks it, saying why."""
from __future__ import annotations

import argparse
from datetime import datetime, timedelta, timezone
from pathlib import Path

from quizprep.cli import grade as command
from quizprep.tui.app import QuizApp
from quizprep.tui.options import QuizOptions
from quizprep.tui.screens.question import QuestionScreen

MUTANT = Path(__file__).parents[1] / "grader" / "mutants" / "mha_split_no_transpose.py"


def grade(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="quizprep")
    command.register(parser.add_subparsers())
    args = parser.parse_args(["grade", *argv])
    return args.handler(args)


async def test_a_graded_bug_is_due_in_review_with_its_reason(tmp_path, capsys):
    db = tmp_path / "progress.sqlite3"
    assert grade(str(MUTANT), "--db", str(db), "--seed", "3") == 1
    assert "multihead-split-transpose" in capsys.readouterr().out
    minute_later = datetime.now(timezone.utc) + timedelta(minutes=1)
    app = QuizApp(QuizOptions(db=db), now=lambda: minute_later, tz=timezone.utc, seed=1)
    async with app.run_test(size=(100, 30)) as pilot:
        exercises = str(app.screen.query_one("#home-exercises").render())
        assert exercises.startswith("Exercises: mha ") and "✗ heads split with a reshape" in exercises
        await pilot.press("r")
        assert isinstance(app.screen, QuestionScreen)
        assert app.screen.showing.question.id == "multihead-split-transpose"
        reason = str(app.screen.query_one("#due-reason").render())
        today = datetime.now(timezone.utc).date().isoformat()
        assert f"your {MUTANT.name} on {today}: heads split with a reshape but no transpose" in reason
