"""Cold start of the quiz app to its first rendered screen, as a ratio against a minimal Textual app.

Both apps start the same way: a fresh `python -c` process that builds the app, runs it headless
and exits right after the first screen has been rendered. The ratio of the median wall times is
what counts (goal: at most 1.3×, issue 32); the absolute times depend on the machine.

The quiz opens a progress database with a learner's history (`--history` answers spread over
the past 60 days, every question's FSRS card reviewed), since that is what a daily start reads;
`--history 0` measures a first start.

    python benchmarks/quiz_startup.py [--runs 15] [--history 1000]
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from quizprep.bank import load_banks
from quizprep.study.scheduling import rating_for_answer
from quizprep.study.store import Store

# Each app leaves right after its first refresh; on_mount runs once the first screen is up.
MINIMAL = """
from textual.app import App
from textual.widgets import Footer, Static

class Minimal(App):
    def compose(self):
        yield Static("hello")
        yield Footer()
    def on_mount(self):
        self.call_after_refresh(self.exit)

Minimal().run(headless=True)
"""

# The quiz starts through the command line, as `quizprep quiz --db PATH` does; the two patches
# only make it headless and leave after its first refresh, like the minimal app.
QUIZ = """
import sys
from quizprep import cli
from quizprep.tui.app import QuizApp

run, on_mount = QuizApp.run, QuizApp.on_mount
QuizApp.run = lambda self, **options: run(self, **options, headless=True)

def first_screen_then_exit(self):
    on_mount(self)
    self.call_after_refresh(self.exit)

QuizApp.on_mount = first_screen_then_exit
code = cli.main(["quiz", "--db", sys.argv[1]])
assert code == 0 and "torch" not in sys.modules, "the quiz app failed or imported torch"
"""


# As after `pip install`, which compiles every module: with PYTHONDONTWRITEBYTECODE set (as on
# some development machines) quizprep's freshly edited modules were compiled from source on every
# run while Textual's came from bytecode.
# As in a terminal, the first layout has the terminal's size: headless, Textual's driver reports
# 80×24 but the app laid its first screen out at Rich's default 80×25, then again at 80×24 (a
# quiz start in tmux at 80×24 lays Home out once). Both apps run with the driver's size.
START_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"} | {
    "COLUMNS": "80", "LINES": "24"}


def timed_run(code: str, *args: str) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one fresh process running `code`. CPU time is
    printed beside wall time because it moves far less with the machine's load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], check=True, env=START_ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def write_history(db: str, answers: int) -> None:
    """`answers` answers to the shipped questions, one every few hours back from now, about
    70 % right, with their rubric-free ratings applied to the cards."""
    questions = load_banks().questions
    rng = random.Random(0)
    start = datetime.now(timezone.utc) - timedelta(days=60)
    step = timedelta(days=60) / max(answers, 1)
    with Store.open(db) as store:
        for n in range(answers):
            question = rng.choice(questions)
            correct = rng.random() < 0.7
            kind = "numeric" if question.kind == "numeric" else "choice"
            store.record_answer(question_id=question.id, topic=question.topic, kind=question.kind,
                                mode="practice", response="42", elapsed_s=20.0,
                                answered_at=start + n * step, correct=correct, score=float(correct),
                                rating=rating_for_answer(kind, question.difficulty, correct, 20.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--history", type=int, default=1000, help="answers in the progress database")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = str(Path(folder) / "progress.sqlite3")
        write_history(db, args.history)
        timed_run(MINIMAL), timed_run(QUIZ, db)  # warm the file cache and .pyc files once
        minimal, quiz = [], []
        for _ in range(args.runs):  # interleaved, so drift in machine load hits both alike
            minimal.append(timed_run(MINIMAL))
            quiz.append(timed_run(QUIZ, db))
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()}, "
          f"Python {platform.python_version()}; median of {args.runs} runs each")
    print(f"quiz: {args.history} answers in the progress database")
    for label, index in (("wall", 0), ("CPU", 1)):
        base = statistics.median(run[index] for run in minimal)
        ours = statistics.median(run[index] for run in quiz)
        print(f"{label:>4}: minimal Textual app {base * 1000:.0f} ms, quizprep quiz {ours * 1000:.0f} ms, "
              f"ratio {ours / base:.2f}x (goal <= 1.3x)")


if __name__ == "__main__":
    main()
