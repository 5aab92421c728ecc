"""A numeric field that says, as the learner types, what number it understood."""
from __future__ import annotations

from typing import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalGroup
from textual.widgets import Input, Static

from quizprep.bank.units import UnitError, example_for, parse_quantity

UNIT_WORDS = {"B": "bytes", "FLOP": "FLOPs", "params": "parameters", "s": "seconds"}


class NumberInput(Input):
    """An Input whose Enter (submit) shows in the footer.

    Enter hands the answer in as the key is handled, not through a Submitted message: the keys
    typed after it wait for the answer to be taken (see KeyHold), and a message would be
    handled after they were let go."""

    BINDINGS = [Binding("enter", "screen.submit", "Submit")]


def answer_hint(unit: str, display_unit: str | None, right: Callable[[str], bool] | None = None) -> str:
    """What to type. A question asked in, say, MiB reads a bare number in MiB, as it asks. No
    example is one that `right` says is the answer."""
    if display_unit == "%":
        example = example_for("%", right).split(" or ")[0].strip('"')
        return f"A bare number counts as percent, as asked: {example} and {example}% both mean {example} %."
    if not unit:
        return f"Answer with a number, e.g. {example_for(unit, right)}."
    if display_unit and display_unit != unit:
        return f"A bare number counts as {display_unit}, as asked; other units work too."
    return f"Answer in {UNIT_WORDS[unit]}, e.g. {example_for(unit, right)}."


class NumericAnswer(VerticalGroup):
    """An Input for a number in `unit`, with a live "understood as" line beneath it. `right`
    says whether a text is the answer: no example shown is."""

    def __init__(self, unit: str, display_unit: str | None = None, value: str = "", *,
                 right: Callable[[str], bool] | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.unit = unit
        self.display_unit = display_unit
        self.value = value
        self.right = right

    def compose(self) -> ComposeResult:
        yield Static(answer_hint(self.unit, self.display_unit, self.right), classes="hint", markup=False)
        # Not selected on focus: a restored draft would go with the first key typed.
        yield NumberInput(self.value, placeholder=f"e.g. {example_for(self.unit, self.right)}",
                          id="numeric-input", select_on_focus=False)
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
            quantity = parse_quantity(event.value, self.unit, self.display_unit)
        except UnitError as error:
            self.refuse(str(error))
        else:
            understood.update(f"understood as {quantity.understood}")
            understood.set_classes("-valid")

    def refuse(self, why: str) -> None:
        """Say under the field why what is typed is not an answer."""
        understood = self.query_one("#understood", Static)
        understood.update(f"✗ {why}")
        understood.set_classes("-invalid")

    def focus(self, scroll_visible: bool = True) -> NumericAnswer:
        self.query_one(Input).focus(scroll_visible)
        return self
