"""The rubric of a free-response question as a checklist toggled by number keys, with its score."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalGroup
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from quizprep.bank.model import RubricItem
from quizprep.tui.widgets.inline_markdown import inline_markdown

TOGGLE = Binding.Group("Toggle", compact=True)


def weighted_score(rubric: tuple[RubricItem, ...], met: frozenset[int]) -> float:
    """The share of rubric weight met, from 0 to 1."""
    total = sum(item.weight for item in rubric)
    return sum(rubric[i].weight for i in met) / total if total else 0.0


class RubricChecklist(VerticalGroup, can_focus=True):
    """One line per criterion; the number key of a line toggles whether the answer met it."""

    COMPONENT_CLASSES = {"rubric-checklist--code"}
    BINDINGS = [
        Binding(str(n), f"toggle_criterion({n - 1})", f"Toggle {n}", group=TOGGLE) for n in range(1, 10)
    ]

    met: reactive[frozenset[int]] = reactive(frozenset())

    def __init__(self, rubric: tuple[RubricItem, ...], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rubric = rubric

    def compose(self) -> ComposeResult:
        for index in range(len(self.rubric)):
            yield Static(self._label(index, False), classes="criterion")
        yield Static(self._score_text(), id="rubric-score")

    @property
    def score(self) -> float:
        return weighted_score(self.rubric, self.met)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_criterion":
            return int(parameters[0]) < len(self.rubric)  # type: ignore[call-overload]
        return True

    def action_toggle_criterion(self, index: int) -> None:
        self.met = self.met ^ {index}

    def watch_met(self, met: frozenset[int]) -> None:
        for index, row in enumerate(self.query(".criterion").results(Static)):
            row.set_class(index in met, "-met")
            row.update(self._label(index, index in met))
        if self.is_mounted:
            self.query_one("#rubric-score", Static).update(self._score_text())

    def _label(self, index: int, met: bool) -> Content:
        item = self.rubric[index]
        return Content.assemble(f"{'☑' if met else '☐'} {index + 1}. ",
                                inline_markdown(item.criterion, ".rubric-checklist--code"),
                                f"  (weight {item.weight:g})")

    def _score_text(self) -> str:
        earned = sum(self.rubric[i].weight for i in self.met)
        total = sum(item.weight for item in self.rubric)
        return f"Score: {earned:g} / {total:g} = {self.score:.0%}"
