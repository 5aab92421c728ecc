"""The quiz app must start without importing torch (it is the grader's dependency, and slow)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"

SCRIPT = """
import asyncio, sys
from quizprep.tui.app import QuizApp
from quizprep.tui.options import QuizOptions
from quizprep.tui.screens.home import HomeScreen

async def main():
    app = QuizApp(QuizOptions(banks=[sys.argv[1]], db=sys.argv[2]))
    async with app.run_test() as pilot:
        await pilot.pause()
        assert isinstance(app.screen, HomeScreen), app.screen
    print("torch" in sys.modules)

asyncio.run(main())
"""


def test_starting_the_app_does_not_import_torch(tmp_path):
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(DATA), str(tmp_path / "db.sqlite3")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"
