"""`d` on Home: set, change or clear the interview date the countdown and forecast use."""
from __future__ import annotations

from datetime import date

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from quizprep.study.dates import EXAMPLES, read_date
from quizprep.tui.widgets.flat_footer import FlatFooter


class InterviewDateScreen(ModalScreen[None]):
    """Posts Chosen to the app with the date typed, or with None when the field was emptied;
    Esc leaves the date as it was."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    class Chosen(Message):
        """The interview date from now on, also for later runs (None: no date)."""

        def __init__(self, on: date | None) -> None:
            super().__init__()
            self.on = on

    def __init__(self, current: date | None, today: date) -> None:
        super().__init__()
        self.current = current
        self.today = today

    def compose(self) -> ComposeResult:
        with Vertical(id="date-box"):
            yield Static("Interview date", id="date-title")
            yield Static(f"{EXAMPLES[0].upper()}{EXAMPLES[1:]}. Enter saves it for later runs too; an empty "
                         "field clears it; Esc leaves it as it was.", classes="hint")
            yield Input(self.current.isoformat() if self.current else "", placeholder="2026-12-15, Dec 15…",
                        id="date-input")
        yield FlatFooter()  # over the screen below's: its keys are not this dialog's

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            on = read_date(event.value, self.today) if event.value.strip() else None
        except ValueError as error:
            self.notify(str(error), title="Interview date", severity="warning", markup=False)
            return
        # Posted to the app itself: this screen's own queue closes as it is dismissed.
        self.app.post_message(self.Chosen(on))
        self.dismiss()

    def action_cancel(self) -> None:
        self.dismiss()
