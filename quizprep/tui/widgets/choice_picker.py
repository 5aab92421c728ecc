"""Choices picked with number keys: one for single-answer questions, several when several are right."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalGroup
from textual.reactive import reactive
from textual.widgets import Static

from quizprep.bank.model import ChoiceQuestion

PICK = Binding.Group("Pick", compact=True)


class ChoicePicker(VerticalGroup, can_focus=True):
    """The choices of one question, numbered from 1; a number key picks (or toggles) that choice."""

    BINDINGS = [
        Binding(str(n), f"pick({n - 1})", f"Pick {n}", group=PICK) for n in range(1, 10)
    ] + [Binding("enter", "screen.submit", "Submit")]

    picked: reactive[frozenset[int]] = reactive(frozenset())

    def __init__(self, question: ChoiceQuestion, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.question = question

    def compose(self) -> ComposeResult:
        hint = "Select all that apply." if self.question.multiple else "Select one."
        yield Static(hint, classes="hint")
        for index, choice in enumerate(self.question.choices):
            yield Static(self._label(index, choice.text, False), classes="choice", markup=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pick":
            return int(parameters[0]) < len(self.question.choices)  # type: ignore[call-overload]
        return True

    def action_pick(self, index: int) -> None:
        if self.question.multiple:
            self.picked = self.picked ^ {index}
        else:
            self.picked = frozenset({index})

    def watch_picked(self, picked: frozenset[int]) -> None:
        for index, row in enumerate(self.query(".choice").results(Static)):
            row.set_class(index in picked, "-picked")
            row.update(self._label(index, self.question.choices[index].text, index in picked))

    def _label(self, index: int, text: str, picked: bool) -> str:
        box = ("■" if picked else "□") if self.question.multiple else ("●" if picked else "○")
        return f"{box} {index + 1}. {text}"
