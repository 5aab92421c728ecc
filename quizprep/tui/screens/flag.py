"""Ctrl+F: flag the question shown as wrong. The reason goes to flagged-questions.md beside the
progress database, where a maintainer reads it."""
from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from quizprep.bank.model import Question
from quizprep.study.clock import Clock
from quizprep.tui.notices import readable_path
from quizprep.tui.widgets.flat_footer import FlatFooter


class FlagScreen(ModalScreen[None]):
    """Asks what is wrong with `question`, then appends it to `flags_file` and says where it went;
    Esc cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: Question, flags_file: Path, now: Clock) -> None:
        super().__init__()
        self.question = question
        self.flags_file = flags_file
        self.now = now

    def compose(self) -> ComposeResult:
        with Vertical(id="flag-box"):
            yield Static(f"Flag {self.question.id} as wrong", id="flag-title", markup=False)
            yield Static("What is wrong with it? Enter sends, Esc cancels.", classes="hint")
            yield Input(placeholder="e.g. choice 2 is also right, because …", id="flag-reason")
        yield FlatFooter()  # over the screen below's: its keys are not this dialog's

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.notify("Say what is wrong, or Esc to cancel.", severity="warning")
            return
        self.dismiss()
        self._write(event.value)

    def _write(self, reason: str) -> None:
        from quizprep.study.flags import flag_question

        question = self.question
        try:
            path = flag_question(question.id, reason, now=self.now(), path=self.flags_file,
                                 source=str(question.source))
        except OSError as error:
            self.notify(f"The flag was not saved: {error}", title="Flag", severity="error", markup=False)
            return
        self.notify(f"{question.id} flagged in {readable_path(str(path))}", title="Thank you", markup=False)

    def action_cancel(self) -> None:
        self.dismiss()
