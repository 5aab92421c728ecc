"""A yes/no question over the current screen, e.g. "End the mock interview now?"."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalGroup
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from quizprep.tui.widgets.flat_footer import FlatFooter


class ConfirmScreen(ModalScreen[bool]):
    """Dismisses with True for yes, False for no. "No" has the focus: Enter alone changes nothing."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, yes: str, no: str) -> None:
        super().__init__()
        self.question = question
        self.yes = yes
        self.no = no

    def compose(self) -> ComposeResult:
        with VerticalGroup(id="confirm-box"):
            yield Static(self.question, id="confirm-question", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.no} (n)", id="no", variant="primary", compact=True)
                yield Button(f"{self.yes} (y)", id="yes", variant="error", compact=True)
        yield FlatFooter()  # over the screen below's: its keys are not this dialog's

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
