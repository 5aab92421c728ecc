"""Ctrl+F: flag the question shown as wrong. The reason goes to flagged-questions.md beside the
progress database, where a maintainer reads it."""
from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from quizprep.bank.model import Question
from quizprep.tui.subject import shown_question

if TYPE_CHECKING:
    from quizprep.tui.app import QuizApp


class FlagScreen(ModalScreen[str | None]):
    """Asks what is wrong; dismisses with the reason, or None on Esc."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, question: Question) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="flag-box"):
            yield Static(f"Flag {self.question.id} as wrong", id="flag-title", markup=False)
            yield Static("What is wrong with it? Enter sends, Esc cancels.", classes="hint")
            yield Input(placeholder="e.g. choice 2 is also right, because …", id="flag-reason")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.notify("Say what is wrong, or Esc to cancel.", severity="warning")
            return
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


def ask_flag(app: QuizApp) -> None:
    """Ask what is wrong with the question shown, then append it to the flags file and say where
    it went."""
    question = shown_question(app.screen)
    if question is None:
        return

    def write(reason: str | None) -> None:
        if reason is None:
            return
        from quizprep.study.flags import flag_question, flags_path
        from quizprep.tui.app import readable_path

        try:
            path = flag_question(question.id, reason, now=app.now(), path=flags_path(app.db_path),
                                 source=str(question.source))
        except OSError as error:
            app.notify(f"The flag was not saved: {error}", title="Flag", severity="error", markup=False)
            return
        app.notify(f"{question.id} flagged in {readable_path(str(path))}", title="Thank you", markup=False)

    app.push_screen(FlagScreen(question), write)
