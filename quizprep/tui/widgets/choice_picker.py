"""Choices picked with number keys, or with the arrow keys and Space: one for single-answer
questions, several when several are right. Shown in the showing's order; picks are original
indices."""
from __future__ import annotations

from typing import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import HorizontalGroup, VerticalGroup
from textual.reactive import reactive
from textual.widgets import Static

from quizprep.bank.model import ChoiceQuestion
from quizprep.tui.widgets.inline_markdown import inline_markdown

PICK = Binding.Group("Pick", compact=True)


class ChoicePicker(VerticalGroup, can_focus=True):
    """The choices of one question, numbered from 1 in display order. A number key picks (or,
    when several are right, toggles) that choice; ↑/↓ move the pointer and Space picks there."""

    COMPONENT_CLASSES = {"choice-picker--code"}
    BINDINGS = [
        *(Binding(str(n), f"pick({n - 1})", f"Pick {n}", group=PICK) for n in range(1, 10)),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("space", "pick_here", "Pick", show=False),
        Binding("enter", "screen.submit", "Submit"),
    ]

    picked: reactive[frozenset[int]] = reactive(frozenset())  # original indices
    cursor: reactive[int] = reactive(0)  # a display position

    def __init__(self, question: ChoiceQuestion, order: Sequence[int] = (), picked: frozenset[int] = frozenset(),
                 *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.question = question
        self.order = tuple(order) or tuple(range(len(question.choices)))
        # Picked before (an answer taken back): shown picked, the pointer on the first of them.
        self.set_reactive(ChoicePicker.picked, picked)
        self.set_reactive(ChoicePicker.cursor, min((self.order.index(i) for i in picked), default=0))

    def compose(self) -> ComposeResult:
        hint = "Select all that apply." if self.question.multiple else "Select one."
        yield Static(hint + " Number keys, or ↑/↓ and Space.", classes="hint")
        for position, index in enumerate(self.order):
            with HorizontalGroup(classes="choice"):
                yield Static(self._mark(position), classes="choice-mark", markup=False)
                yield Static(inline_markdown(self.question.choices[index].text, ".choice-picker--code"),
                             classes="choice-text")

    def watch_has_focus(self, _has_focus: bool) -> None:
        # Only the picker's own border shows its focus. Restyling every row with it (Textual's
        # default) cost a few ms on each question's focus, and again as its screen went away.
        self.app.stylesheet.update_nodes([self], animate=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pick":
            return int(parameters[0]) < len(self.order)  # type: ignore[call-overload]
        return True

    def cursor_in_view(self, *, animate: bool = False) -> None:
        """Scroll the choice under the pointer into view (e.g. picked below a long prompt's edge)."""
        self.query(".choice")[self.cursor].scroll_visible(animate=animate)

    def action_pick(self, position: int) -> None:
        self.cursor = position
        self.cursor_in_view()
        index = self.order[position]
        self.picked = self.picked ^ {index} if self.question.multiple else frozenset({index})

    def action_pick_here(self) -> None:
        self.action_pick(self.cursor)

    def action_move(self, step: int) -> None:
        self.cursor = (self.cursor + step) % len(self.order)
        self.cursor_in_view(animate=True)

    def watch_picked(self) -> None:
        self._show_marks()

    def watch_cursor(self) -> None:
        self._show_marks()

    def _show_marks(self) -> None:
        for position, row in enumerate(self.query(".choice")):
            row.set_class(self.order[position] in self.picked, "-picked")
            row.query_one(".choice-mark", Static).update(self._mark(position))

    def _mark(self, position: int) -> str:
        picked = self.order[position] in self.picked
        box = ("■" if picked else "□") if self.question.multiple else ("●" if picked else "○")
        pointer = "▸" if position == self.cursor else " "
        return f"{pointer} {box} {position + 1}. "
