"""What `quizprep quiz` imports before Home's first frame: only what Home shows. Each module below
is loaded where it is first needed (benchmarks/quiz_startup.py times the start against a bare
Textual app); importing one at start again would cost every learner its time on every start."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"

# Heavy, and needed only once a session, another screen or a cold bank load needs them; hashlib
# (it loads OpenSSL) not at all. Home is drawn from the banks' summary: the model and the loader
# come with the first session.
DEFERRED = (
    "yaml", "hashlib", "quizprep.bank.model", "quizprep.bank.loader", "quizprep.bank.formula",
    "quizprep.bank.validate", "quizprep.bank.units", "quizprep.study.session",
    "quizprep.study.interview", "quizprep.study.search", "quizprep.study.stats", "textual.widgets._markdown",
    "textual.widgets._text_area", "quizprep.grader", "torch", "numpy",
)
SCREENS_AT_START = {"quizprep.tui.screens", "quizprep.tui.screens.home", "quizprep.tui.screens.step",
                    "quizprep.tui.screens.styled"}

# Starts through the command line as `quizprep quiz` does, leaving right after Home's first
# frame, and prints what the deferred modules and the screens are that were imported by then.
START = """
import sys
from quizprep import cli
from quizprep.tui.app import QuizApp

run, on_mount = QuizApp.run, QuizApp.on_mount
QuizApp.run = lambda self, **options: run(self, **options, headless=True)

def first_screen_then_exit(self):
    on_mount(self)
    self.call_after_refresh(self.exit)

QuizApp.on_mount = first_screen_then_exit
assert cli.main(["quiz", "--bank", sys.argv[1], "--db", sys.argv[2]]) == 0
deferred = sys.argv[3].split(",")
print(",".join(sorted(name for name in sys.modules if name in deferred or name.startswith("quizprep.tui.screens"))))
"""


def imported_at_start(tmp_path: Path) -> set[str]:
    env = dict(os.environ, QUIZPREP_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, "-c", START, str(DATA), str(tmp_path / "db.sqlite3"), ",".join(DEFERRED)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    return set(run.stdout.strip().split(","))


def test_a_daily_start_imports_no_module_home_does_not_show(tmp_path: Path) -> None:
    imported_at_start(tmp_path)  # the first start validates the banks (with yaml) and caches them
    assert imported_at_start(tmp_path) == SCREENS_AT_START
