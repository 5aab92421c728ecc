"""`h`: a card's history (every answer, the rating it got, when it was next due) and why it is
due now, for one question or for each question of a Home topic."""
from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from quizprep.bank.model import ChoiceQuestion, Question
from quizprep.study.clock import zone_text
from quizprep.study.history import HistoryEntry, card_history, numbers_of, prompt_summary, why_due
from quizprep.study.store import Store
from quizprep.tui.screens.home import shorten
from quizprep.tui.widgets.inline_markdown import inline_markdown
from quizprep.tui.widgets.flat_footer import FlatFooter

RESPONSE_WIDTH = 60


def result_text(entry: HistoryEntry, question: Question) -> str:
    if entry.correct is None:
        return "… awaiting rubric"
    mark = "✓" if entry.correct else "✗"
    if question.kind == "free" and entry.score is not None:
        return f"{mark} {entry.score:.0%}"
    return f"{mark} right" if entry.correct else f"{mark} wrong"


def response_text(entry: HistoryEntry, question: Question) -> str:
    if not entry.response:
        return "don't know"
    if isinstance(question, ChoiceQuestion):
        picked = [question.choices[int(n) - 1].text for n in entry.response.split(",")
                  if n.isdigit() and 0 < int(n) <= len(question.choices)]
        return shorten("picked: " + "; ".join(picked), RESPONSE_WIDTH)
    answered = "answered: " + " ".join(entry.response.split())
    numbers = numbers_of(question, entry.seed)
    if numbers is not None and not entry.correct:
        from quizprep.bank.numeric import expected_text

        answered += f" (right: {expected_text(question, numbers)})"  # type: ignore[arg-type]
    return shorten(answered, RESPONSE_WIDTH)


def entry_line(entry: HistoryEntry, question: Question, zone: tzinfo | None) -> str:
    """One answer, its times in `zone`."""
    due = f"  next due {entry.due_after.astimezone(zone):%Y-%m-%d %H:%M}" if entry.due_after else ""
    return (f"{entry.answered_at.astimezone(zone):%Y-%m-%d %H:%M}  {entry.mode}  {result_text(entry, question)}  "
            f"{entry.rating_name or '—'}{due}  · {response_text(entry, question)}")


class HistoryScreen(Screen[None]):
    """Times are in the zone of `now` (the learner's), as in the why-due sentences."""

    COMPONENT_CLASSES = {"history--code"}
    BINDINGS = [Binding("escape,q,h", "close", "Back")]

    def __init__(self, store: Store, questions: Sequence[Question], now: datetime, title: str) -> None:
        super().__init__()
        self.store = store
        self.questions = list(questions)
        self.now = now
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Horizontal(id="history-bar"):
            yield Static(f"History · {self.title_text} · times in {zone_text(self.now)}", id="history-heading",
                         markup=False)
        with VerticalScroll(id="history-body"):
            for question in self.questions:
                yield from self._section(question)
        yield FlatFooter()

    def _section(self, question: Question) -> ComposeResult:
        entries = card_history(self.store, question.id)
        latest = numbers_of(question, next((e.seed for e in reversed(entries) if e.seed is not None), None))
        yield Static(inline_markdown(f"{question.id} · {prompt_summary(question, latest)}", ".history--code"),
                     classes="history-title")
        yield Static(why_due(self.store, question, self.now), classes="history-why", markup=False)
        for entry in entries:
            yield Static(entry_line(entry, question, self.now.tzinfo), classes="history-line", markup=False)
        if not entries:
            yield Static("No answers yet.", classes="history-line hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#history-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)

