"""After a free response: the learner's answer, the model answer and the rubric to tick, in one
scrolling column (two answer panes side by side on a wide terminal)."""
from __future__ import annotations

from typing import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalGroup, VerticalScroll
from textual.widgets import Markdown, Static

from quizprep.tui.screens.step import Step
from quizprep.study.session import PendingAssessment
from quizprep.tui.screens.feedback import bullets
from quizprep.tui.widgets.round_timer import RoundTimer
from quizprep.tui.widgets.rubric_checklist import RubricChecklist
from quizprep.tui.widgets.flat_footer import FlatFooter


class RubricScreen(Step[tuple[bool, ...] | None]):
    """Dismisses with one bool per rubric item (met or not), or None to leave it unassessed.

    The answer is already saved; an assessment left undone is offered again at the next start.
    The round timer keeps showing here but never cuts an assessment short: the answer was given
    in time, and ticking the rubric is not interview time."""

    AUTO_FOCUS = ""  # focusing the checklist by default would scroll past the answers; see on_mount
    # Below 120 columns each of two side-by-side panes would be narrower than a sentence.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    # The checklist keeps focus (number keys tick); these keys scroll the column around it.
    BINDINGS = [
        Binding("enter", "save", "Save score"),
        Binding("escape", "leave", "Later"),
        Binding("up", "scroll('scroll_up')", "Scroll", show=False),
        Binding("down", "scroll('scroll_down')", "Scroll", show=False),
        Binding("pageup", "scroll('scroll_page_up')", "Scroll", show=False),
        Binding("pagedown", "scroll('scroll_page_down')", "Scroll", show=False),
        Binding("home", "scroll('scroll_home')", "Top", show=False),
        Binding("end", "scroll('scroll_end')", "Bottom", show=False),
    ]

    def __init__(self, pending: PendingAssessment, time_left: Callable[[], float] | None = None,
                 met: tuple[bool, ...] = ()) -> None:
        super().__init__()
        self.pending = pending
        self.time_left = time_left
        # The ticks of an earlier try whose save failed, of the score being edited, or of an answer taken back.
        self.met = met

    def compose(self) -> ComposeResult:
        question = self.pending.question
        with Horizontal(id="rubric-bar"):
            yield Static(f"Assess your answer to {question.id}", id="rubric-title", markup=False)
            if self.time_left is not None:
                yield RoundTimer(self.time_left, id="timer")
        with VerticalScroll(id="rubric-body", can_focus=False):
            yield Markdown(question.prompt, id="rubric-prompt")
            with VerticalGroup(id="answers"):
                with VerticalGroup(classes="answer-pane"):
                    yield Static("Your answer", classes="pane-title")
                    yield Static(self.pending.response, id="learner-answer", markup=False)
                with VerticalGroup(classes="answer-pane"):
                    yield Static("Model answer", classes="pane-title")
                    yield Markdown(question.model_answer, id="model-answer")
            yield Static("Tick each criterion your answer met (number keys), then Enter. "
                         "↑ ↓ PgUp PgDn scroll.", classes="hint")
            yield RubricChecklist(question.rubric, id="checklist")
            notes = [bullets("Common pitfalls", question.pitfalls),
                     bullets("What an interviewer asks next", question.follow_ups),
                     f"### Explanation\n\n{question.explanation}"]
            yield Markdown("\n\n".join(note for note in notes if note), id="rubric-notes")
        yield FlatFooter()

    def on_mount(self) -> None:
        checklist = self.query_one(RubricChecklist)
        checklist.met = frozenset(i for i, met in enumerate(self.met) if met)
        # Reading comes before ticking: the column opens at the top, with the learner's answer.
        checklist.focus(scroll_visible=False)

    def action_scroll(self, method: str) -> None:
        getattr(self.query_one("#rubric-body", VerticalScroll), method)(animate=False)

    def ticked(self) -> tuple[bool, ...]:
        """One bool per rubric item: ticked on the checklist now."""
        met = self.query_one(RubricChecklist).met
        return tuple(i in met for i in range(len(self.pending.question.rubric)))

    def action_save(self) -> None:
        self.dismiss(self.ticked())

    def action_leave(self) -> None:
        self.met = self.ticked()  # kept for later
        self.dismiss(None)


class RubricEditScreen(RubricScreen):
    """The rubric of an answer assessed earlier, opened with its ticks to change them."""

    BINDINGS = [Binding("escape", "leave", "Keep score")]
