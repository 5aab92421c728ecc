"""A numeric field that says, as the learner types, what number it understood."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalGroup
from textual.widgets import Input, Static

from quizprep.bank.units import UnitError, example_for, parse_quantity

UNIT_WORDS = {"B": "bytes", "FLOP": "FLOPs", "params": "parameters", "s": "seconds", "": "a number"}


class NumberInput(Input):
    """An Input whose Enter (submit) and F1 (help, as `?` is typed) show in the footer."""

    BINDINGS = [Binding("enter", "submit", "Submit"), Binding("f1", "app.help", "Help")]


class NumericAnswer(VerticalGroup):
    """An Input for a number in `unit`, with a live "understood as" line beneath it."""

    def __init__(self, unit: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.unit = unit

    def compose(self) -> ComposeResult:
        yield Static(f"Answer in {UNIT_WORDS[self.unit]}, e.g. {example_for(self.unit)}.", classes="hint")
        yield NumberInput(placeholder=f"e.g. {example_for(self.unit)}", id="numeric-input")
        yield Static("", id="understood", markup=False)

    @property
    def text(self) -> str:
        return self.query_one(Input).value

    def on_input_changed(self, event: Input.Changed) -> None:
        understood = self.query_one("#understood", Static)
        if not event.value.strip():
            understood.update("")
            understood.set_classes("")
            return
        try:
            quantity = parse_quantity(event.value, self.unit)
        except UnitError as error:
            understood.update(f"✗ {error}")
            understood.set_classes("-invalid")
        else:
            understood.update(f"understood as {quantity.understood}")
            understood.set_classes("-valid")

    def focus(self, scroll_visible: bool = True) -> NumericAnswer:
        self.query_one(Input).focus(scroll_visible)
        return self
