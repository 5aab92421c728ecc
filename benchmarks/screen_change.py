"""Screen-change latency inside a quiz session: submit→feedback and next→question.

The quiz app runs headless (Textual's Pilot) on the shipped banks in practice mode, with a fresh
progress database. Each change is timed from the key until the app is idle with the new screen
current and drawn: a choice question is answered (its number, then Enter), any other kind is
handed in with Ctrl+G ("don't know"), which also commits the answer and renders the full
feedback; `n` goes on to the next question. The baseline is a minimal Textual app switching
between two screens (a Static and a Footer each) on a key, timed the same way in the same
process. Goal from issue 21: ≤ 100 ms median on the 2-core development machine.

    python benchmarks/screen_change.py [--changes 20]
"""
from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import tempfile
import time
from pathlib import Path

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Static

from quizprep.bank.model import ChoiceQuestion
from quizprep.tui.app import QuizApp
from quizprep.tui.options import QuizOptions
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.question import QuestionScreen

SIZE = (100, 30)


class Page(Screen[None]):
    def compose(self) -> ComposeResult:
        yield Static("A page of text, as the minimal app's screen.")
        yield Footer()


class Minimal(App[None]):
    BINDINGS = [("x", "flip", "Flip")]

    def on_mount(self) -> None:
        self.push_screen(Page())

    def action_flip(self) -> None:
        self.switch_screen(Page())


async def timed(pilot, *keys: str) -> float:
    start = time.perf_counter()
    await pilot.press(*keys)
    await pilot.pause()
    return time.perf_counter() - start


async def baseline(changes: int) -> list[float]:
    app = Minimal()
    async with app.run_test(size=SIZE) as pilot:
        return [await timed(pilot, "x") for _ in range(changes)]


async def quiz(db: Path, changes: int) -> tuple[list[float], list[float]]:
    app = QuizApp(QuizOptions(db=db, mode="practice"), seed=1)
    submits, nexts = [], []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for _ in range(changes):
            assert isinstance(app.screen, QuestionScreen), app.screen
            if isinstance(app.screen.showing.question, ChoiceQuestion):
                await pilot.press("1")
                submits.append(await timed(pilot, "enter"))
            else:
                submits.append(await timed(pilot, "ctrl+g"))
            assert isinstance(app.screen, FeedbackScreen), app.screen
            nexts.append(await timed(pilot, "n"))
    return submits, nexts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = asyncio.run(baseline(args.changes))
        submits, nexts = asyncio.run(quiz(Path(folder) / "progress.sqlite3", args.changes))
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()}, "
          f"Python {platform.python_version()}; median of {args.changes} changes each, {SIZE[0]}x{SIZE[1]}")
    floor = statistics.median(base)
    print(f"minimal Textual app, switch_screen on a key: {floor * 1000:.0f} ms")
    for label, times in (("submit→feedback", submits), ("next→question", nexts)):
        median = statistics.median(times)
        print(f"{label}: median {median * 1000:.0f} ms, max {max(times) * 1000:.0f} ms, "
              f"ratio to the minimal app {median / floor:.1f}x (goal ≤ 100 ms)")


if __name__ == "__main__":
    main()
