"""After a session (a mock round above all): each answer in turn, with the question as it was
asked, what the learner answered, whether it was right, the worked solution or model answer, the
explanation and the rubric items missed."""
from __future__ import annotations

from typing import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Markdown, Static

from quizprep.bank.model import FreeQuestion
from quizprep.study.session import Feedback
from quizprep.tui.screens.feedback import CRAM_LEAVES_SCHEDULE, answer_parts, bullets, verdict_text
from quizprep.tui.widgets.flat_footer import FlatFooter


def debrief_markdown(feedback: Feedback, *, schedules: bool = True) -> str:
    """Everything after the learner's own answer: the judgement, the solution, the explanation,
    and the rating the schedule took (`schedules` is False for cram, which moves no review)."""
    parts = answer_parts(feedback) + [
        f"### Explanation\n\n{feedback.explanation}",
        bullets("Rubric items missed", [item.criterion for item in feedback.missed]),
        bullets("Pitfalls", feedback.question.pitfalls),
        f"*Rated {feedback.rating.name}.*" if schedules else f"*{CRAM_LEAVES_SCHEDULE}.*",
    ]
    return "\n\n".join(part for part in parts if part)


class DebriefScreen(Screen[None]):
    """Steps through `answers` one at a time; Esc goes back to the report."""

    BINDINGS = [
        Binding("right,n", "step(1)", "Next answer"),
        Binding("left,p", "step(-1)", "Previous"),
        Binding("escape,q", "close", "Back to report"),
    ]

    def __init__(self, answers: Sequence[Feedback], *, schedules: bool = True) -> None:
        super().__init__()
        self.answers = tuple(answers)
        self.schedules = schedules
        self.place = 0

    def compose(self) -> ComposeResult:
        with Horizontal(id="debrief-bar"):
            yield Static(id="debrief-title", markup=False)
            yield Static(id="verdict", markup=False)
        with VerticalScroll(id="debrief-body"):
            yield Markdown(id="debrief-prompt")
            yield Static("Your answer", classes="pane-title")
            yield Static(id="debrief-answer", markup=False)
            yield Markdown(id="debrief-detail")
        yield FlatFooter()

    def on_mount(self) -> None:
        self._show()
        self.query_one("#debrief-body").focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "step":
            return 0 <= self.place + int(parameters[0]) < len(self.answers)  # type: ignore[call-overload]
        return True

    def action_step(self, by: int) -> None:
        self.place += by
        self._show()
        self.refresh_bindings()

    def action_close(self) -> None:
        self.dismiss(None)

    def _show(self) -> None:
        feedback = self.answers[self.place]
        self.query_one("#debrief-title", Static).update(
            f"Answer {self.place + 1} of {len(self.answers)} · {feedback.question.id}")
        verdict = self.query_one("#verdict", Static)
        verdict.update(verdict_text(feedback))
        verdict.set_classes("-right" if feedback.correct else "-wrong")
        self.query_one("#debrief-prompt", Markdown).update(f"### Question\n\n{feedback.showing.prompt}")
        # A free answer is the learner's own text, shown as typed; choices and numbers are part
        # of the judgement below.
        free = isinstance(feedback.question, FreeQuestion) and not feedback.skipped
        for part in self.query(".pane-title, #debrief-answer"):
            part.display = free
        self.query_one("#debrief-answer", Static).update(feedback.response)
        self.query_one("#debrief-detail", Markdown).update(debrief_markdown(feedback, schedules=self.schedules))
        self.query_one("#debrief-body", VerticalScroll).scroll_home(animate=False)
