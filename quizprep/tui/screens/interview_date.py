"""`d` on Home: set, change or clear the interview date the countdown and forecast use."""
from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from quizprep.study.store import StoreError

if TYPE_CHECKING:
    from quizprep.tui.app import QuizApp

CLEARED = "cleared"


def read_date(text: str, today: date) -> date:
    """An interview date typed as YYYY-MM-DD; ValueError says what is wrong."""
    try:
        on = date.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a date: type it as YYYY-MM-DD, e.g. "
                         f"{today.replace(day=min(today.day, 28)).isoformat()}") from None
    if on < today:
        raise ValueError(f"{on.isoformat()} has passed: the interview date must be today or later")
    return on


class InterviewDateScreen(ModalScreen["date | str | None"]):
    """Dismisses with the new date, CLEARED when the field was emptied, None on Esc."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, current: date | None, today: date) -> None:
        super().__init__()
        self.current = current
        self.today = today

    def compose(self) -> ComposeResult:
        with Vertical(id="date-box"):
            yield Static("Interview date", id="date-title")
            yield Static("YYYY-MM-DD. Enter saves it for later runs too; an empty field clears it; "
                         "Esc leaves it as it was.", classes="hint")
            yield Input(self.current.isoformat() if self.current else "", placeholder="YYYY-MM-DD",
                        id="date-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.dismiss(CLEARED)
            return
        try:
            self.dismiss(read_date(event.value, self.today))
        except ValueError as error:
            self.notify(str(error), title="Interview date", severity="warning", markup=False)

    def action_cancel(self) -> None:
        self.dismiss(None)


def ask_interview_date(app: QuizApp) -> None:
    """Ask for the date; keep what the learner gives for this run and later ones."""
    def keep(on: date | str | None) -> None:
        from quizprep.study.interview import SETTING, save_date

        if on is None or app.store is None:
            return
        try:
            if isinstance(on, date):
                save_date(app.store, on)
            else:
                app.store.set_setting(SETTING, "")
        except StoreError as error:
            app.store_problem(error)
            return
        app.interview = on if isinstance(on, date) else None
        app.refresh_home()

    app.push_screen(InterviewDateScreen(app.interview, app.now().date()), keep)
