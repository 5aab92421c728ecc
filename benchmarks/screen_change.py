"""Screen-change latency inside a quiz session: submit→feedback and next→question.

The quiz app runs headless (Textual's Pilot) on the shipped banks in practice mode, with a fresh
progress database. A choice question is answered (its number, then Enter), any other kind is
handed in with Ctrl+G ("don't know"), which also commits the answer and renders the full
feedback; `n` goes on to the next question. Three figures per change, each the median of
`--changes` changes:

- **first frame**: from the key until the app hands the terminal its first frame of the new
  screen (the headless driver skips the write, so the frame is also rendered to terminal
  sequences here, to count that cost);
- **complete**: until the first frame whose cells are those the screen settles on (the last
  frame before the app goes idle): the screen as the learner reads it, Markdown, focus and
  footer keys included. Reading each frame's cells back costs the app a few ms per frame, which
  only makes this figure later;
- **last frame**: until the last frame before idle, often a repaint of the same cells;
- **Pilot round trip**: until Pilot's `press` + `pause` return. Pilot polls for an idle process in
  20 ms sleeps after each key, so this carries ~70 ms of test-harness waiting that a learner at a
  terminal never sees; it is the figure earlier runs reported.

The baseline is a minimal Textual app switching between two screens (a Static and a Footer
each) on a key, timed the same way in the same process. Every frame drawn during a change is
checked to belong to the screen being left or the one arriving: a frame of any other screen
(Home) is a flash and stops the benchmark. Goal from issue 21: complete ≤ 100 ms median on the
2-core development machine.

    python benchmarks/screen_change.py [--changes 20]
"""
from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from textual.app import App, ComposeResult
from textual.pilot import Pilot
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


@dataclass
class Frames:
    """Every frame the app hands its driver: the time, the screen it shows and that screen's cells."""

    app: App
    shown: list[tuple[float, Screen, list[str]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        display = self.app._display

        def recording(screen: Screen, renderable: object) -> None:
            if renderable is None:
                return display(screen, renderable)
            if hasattr(renderable, "render_segments"):
                renderable.render_segments(self.app.console)  # what a real terminal would cost
            moment = time.perf_counter()
            cells = [str(strip) for strip in screen._compositor.render_strips()]
            self.shown.append((moment, screen, cells))
            return display(screen, renderable)

        self.app._display = recording  # type: ignore[method-assign]


@dataclass
class Timings:
    first: list[float] = field(default_factory=list)
    complete: list[float] = field(default_factory=list)
    last: list[float] = field(default_factory=list)
    round_trip: list[float] = field(default_factory=list)


async def change(pilot: Pilot, frames: Frames, timings: Timings, key: str) -> None:
    leaving = pilot.app.screen
    frames.shown.clear()
    start = time.perf_counter()
    await pilot.press(key)
    await pilot.pause()
    timings.round_trip.append(time.perf_counter() - start)
    arriving = pilot.app.screen
    assert arriving is not leaving, f"{key!r} left {leaving} on screen"
    strangers = {type(screen).__name__ for _, screen, _ in frames.shown
                 if screen is not leaving and screen is not arriving}
    assert not strangers, f"{key!r} flashed {strangers} between {leaving} and {arriving}"
    mine = [(moment, cells) for moment, screen, cells in frames.shown if screen is arriving]
    final = mine[-1][1]
    timings.first.append(mine[0][0] - start)
    timings.complete.append(next(moment for moment, cells in mine if cells == final) - start)
    timings.last.append(mine[-1][0] - start)


async def baseline(changes: int) -> Timings:
    app = Minimal()
    timings = Timings()
    async with app.run_test(size=SIZE) as pilot:
        frames = Frames(app)
        for _ in range(changes):
            await change(pilot, frames, timings, "x")
    return timings


async def quiz(db: Path, changes: int) -> tuple[Timings, Timings]:
    app = QuizApp(QuizOptions(db=db, mode="practice"), seed=1)
    submits, nexts = Timings(), Timings()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        frames = Frames(app)
        for _ in range(changes):
            assert isinstance(app.screen, QuestionScreen), app.screen
            if isinstance(app.screen.showing.question, ChoiceQuestion):
                await pilot.press("1")
                await change(pilot, frames, submits, "enter")
            else:
                await change(pilot, frames, submits, "ctrl+g")
            assert isinstance(app.screen, FeedbackScreen), app.screen
            await change(pilot, frames, nexts, "n")
    return submits, nexts


def milliseconds(times: list[float]) -> str:
    return f"{statistics.median(times) * 1000:.0f} ms (max {max(times) * 1000:.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        base = asyncio.run(baseline(args.changes))
        submits, nexts = asyncio.run(quiz(Path(folder) / "progress.sqlite3", args.changes))
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()}, "
          f"Python {platform.python_version()}; median of {args.changes} changes each, "
          f"{SIZE[0]}x{SIZE[1]}; no frame of another screen drawn during any change")
    print(f"{'change':<35}" + "".join(f"{title:>17}" for title in
                                      ("first frame", "complete", "last frame", "Pilot round trip")))
    rows = (("minimal app, switch_screen", base),
            ("submit→feedback", submits), ("next→question", nexts))
    for label, timings in rows:
        print(f"{label:<35}" + "".join(f"{milliseconds(times):>17}" for times in
                                        (timings.first, timings.complete, timings.last, timings.round_trip)))
    for label, timings in rows[1:]:
        complete = statistics.median(timings.complete)
        verdict = "met" if complete <= 0.1 else "NOT met"
        print(f"{label}: complete in {complete / statistics.median(base.complete):.1f}x the minimal "
              f"app's time; goal ≤ 100 ms: {verdict}")


if __name__ == "__main__":
    main()
