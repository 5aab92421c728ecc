"""Helpers for the rubric, mock and report tests: a bank whose free question has a model answer
too long for one screen, the text a screen shows, and waiting for the session worker."""
from __future__ import annotations

import json
import time
from pathlib import Path

DATA = Path(__file__).parent / "data"
# The last words of the long model answer: on screen only when its end was scrolled into view.
MODEL_ANSWER_END = "merged heads go through W_O last."
LONG_MODEL_ANSWER = " ".join(
    f"Step {n}: the shapes stay (B, h, L, d_k) while each head works on its own slice of the width."
    for n in range(1, 16)) + " Finally the " + MODEL_ANSWER_END


def edited_alpha_bank(folder: Path, edits: dict[str, str]) -> Path:
    """The alpha test bank written to `folder` with each text in `edits` (found exactly once)
    replaced."""
    bank = (DATA / "alpha.yaml").read_text(encoding="utf-8")
    for old, new in edits.items():
        assert bank.count(old) == 1, old
        bank = bank.replace(old, new)
    path = folder / "alpha.yaml"
    path.write_text(bank, encoding="utf-8")
    return path


def long_answer_bank(folder: Path) -> Path:
    """The alpha test bank with the free question's model answer replaced by LONG_MODEL_ANSWER,
    and its difficulty lowered to 1 so that practice asks it second (after alpha-choice), not last."""
    bank = (DATA / "alpha.yaml").read_text(encoding="utf-8")
    short = next(line for line in bank.splitlines() if line.strip().startswith("model_answer:"))
    long = short[: short.index("model_answer:")] + f"model_answer: {json.dumps(LONG_MODEL_ANSWER)}"
    return edited_alpha_bank(folder, {short: long, "difficulty: 3": "difficulty: 1"})


def screen_text(app) -> str:
    """What the terminal shows now, as words separated by single spaces: a phrase wrapped over
    two rows of a bordered pane still reads as written."""
    rows = (strip.text for strip in app.screen._compositor.render_strips())
    return " ".join(" ".join(rows).replace("│", " ").split())


def footer_text(app) -> str:
    """The terminal's last row as it shows now: the footer's keys."""
    return app.screen._compositor.render_strips()[-1].text.rstrip()


async def on_screen(pilot, screen_type: type, timeout: float = 20.0) -> None:
    """Wait until the session worker has pushed `screen_type` and it is mounted, its widgets
    composed (a loaded machine is slow: pushed, a screen could be queried before its compose ran;
    and a key pressed earlier would land on the screen before it)."""
    deadline = time.monotonic() + timeout
    while not (isinstance(pilot.app.screen, screen_type) and pilot.app.screen.is_mounted):
        assert time.monotonic() < deadline, f"still on {pilot.app.screen!r}, expected {screen_type.__name__}"
        await pilot.pause(0.02)
