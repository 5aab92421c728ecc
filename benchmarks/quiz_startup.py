"""Cold start of the quiz app to its first rendered screen, as a ratio against a minimal Textual app.

Both apps start the same way: a fresh `python -c` process that builds the app, runs it headless
and exits right after the first screen has been rendered. The ratio of the median wall times is
what counts (goal: under 1.5×); the absolute times depend on the machine.

    python benchmarks/quiz_startup.py [--runs 9]
"""
from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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

QUIZ = """
import sys
from quizprep.tui.app import QuizApp

class FirstScreen(QuizApp):
    def on_mount(self):
        super().on_mount()
        self.call_after_refresh(self.exit)

FirstScreen(db=sys.argv[1]).run(headless=True)
assert "torch" not in sys.modules, "the quiz app imported torch"
"""


def wall_time(code: str, *args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = str(Path(folder) / "progress.sqlite3")
        wall_time(MINIMAL), wall_time(QUIZ, db)  # warm the file cache and .pyc files once
        minimal, quiz = [], []
        for _ in range(args.runs):  # interleaved, so drift in machine load hits both alike
            minimal.append(wall_time(MINIMAL))
            quiz.append(wall_time(QUIZ, db))
    base, ours = statistics.median(minimal), statistics.median(quiz)
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()}, "
          f"Python {platform.python_version()}")
    print(f"minimal Textual app: median {base * 1000:.0f} ms over {args.runs} runs")
    print(f"quizprep quiz:       median {ours * 1000:.0f} ms over {args.runs} runs")
    print(f"ratio: {ours / base:.2f}x (goal < 1.5x)")


if __name__ == "__main__":
    main()
