"""After an answer (or a skip): right or wrong, and why, with this draw's numbers."""
from __future__ import annotations

import re
import time
from datetime import datetime
from typing import Sequence

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Markdown, Static

from quizprep.bank.model import ChoiceQuestion, FreeQuestion, NumericQuestion
from quizprep.bank.numeric import tolerance_text
from quizprep.study.session import Feedback, PendingAssessment, Session
from quizprep.study.store import StoreError
from quizprep.tui.screens.step import Step
from quizprep.tui.outcome import NEXT, TIME_UP
from quizprep.tui.screens.question import seconds_left
from quizprep.tui.widgets.flat_footer import FlatFooter
from quizprep.tui.widgets.quick import QuickMarkdown
from quizprep.tui.widgets.round_timer import RoundTimer


def due_phrase(due: datetime, now: datetime) -> str:
    seconds = (due - now).total_seconds()
    if seconds < 3600:
        return f"in {max(1, round(seconds / 60))} min"
    if seconds < 86400:
        return f"in {round(seconds / 3600)} h"
    days = round(seconds / 86400)
    return f"in {days} day{'' if days == 1 else 's'}"  # not "in 1 days"


def bullets(title: str, items: Sequence[str]) -> str:
    """A Markdown section listing `items`, or "" when there are none."""
    return f"### {title}\n\n" + "\n".join(f"- {item}" for item in items) if items else ""


CRAM_LEAVES_SCHEDULE = "Cram leaves your review schedule as it was"


def feedback_markdown(feedback: Feedback) -> str:
    """The explanation of one judged answer as Markdown; what it did to the schedule is said
    apart, by `review_line`."""
    question = feedback.question
    parts = answer_parts(feedback) + [
        f"### Explanation\n\n{feedback.explanation}",
        bullets("Pitfalls", question.pitfalls),
        bullets("References", question.references),
    ]
    return "\n\n".join(part for part in parts if part)


def review_line(feedback: Feedback, now: datetime, *, schedules: bool = True) -> str:
    """"Saved. Rated Good; next review in 2 days."; `schedules` is False in cram, which moves no
    review."""
    pace = f", but slow ({feedback.elapsed_s:.0f} s)" if feedback.slow else ""
    review = (f"Rated {feedback.rating.name}; next review {due_phrase(feedback.next_due, now)}" if schedules
              else CRAM_LEAVES_SCHEDULE)
    return f"Saved{pace}. {review}."


def answer_parts(feedback: Feedback) -> list[str]:
    """What was answered against what was expected, as Markdown sections: the numbers and the
    worked computation, the choices in the order they were shown, or the rubric."""
    question = feedback.question
    parts = ["**You skipped this question.** Here is how it goes."] if feedback.skipped else []
    if isinstance(question, NumericQuestion):
        if feedback.verdict is not None:
            verdict = feedback.verdict
            parts.append(f"**You answered** {code(feedback.response)}, understood as **{verdict.understood}**.  \n"
                         f"**Expected** {verdict.expected} (tolerance {tolerance_text(question)}).")
            if verdict.diagnosis:
                parts.append(f"**What your number means:** {verdict.diagnosis}")
        if feedback.worked:
            # Inline code, not a fenced block: long steps must wrap at 80 columns, not scroll sideways.
            steps = "\n".join(f"- {code(step)}" for step in feedback.worked)
            parts.append(f"### Worked computation\n\n{steps}")
    elif isinstance(question, ChoiceQuestion):
        parts.append("### The choices\n\n" + choices_markdown(question, feedback))
    elif isinstance(question, FreeQuestion):
        ticks = "\n".join(f"- {'☑' if met else '☐'} {item.criterion}"
                           for item, met in zip(question.rubric, feedback.rubric_met))
        parts.append(f"### Model answer\n\n{question.model_answer}")
        if ticks:
            parts.append(f"### Rubric ({feedback.score:.0%})\n\n{ticks}")
    return parts


def choices_markdown(question: ChoiceQuestion, feedback: Feedback) -> str:
    """One line per choice, numbered as shown. The number, not the text, is in bold: a choice
    with its own **emphasis** would otherwise turn inside out."""
    order = feedback.showing.choice_order or tuple(range(len(question.choices)))
    lines = []
    for position, index in enumerate(order):
        choice = question.choices[index]
        mark = "✓" if choice.correct else "✗"
        yours = " *(your pick)*" if index in feedback.picked else ""
        lines.append(f"- {mark} **{position + 1}.** {choice.text}{yours} — {choice.why}")
    return "\n".join(lines)


def code(text: str) -> str:
    """`text` as inline code, fenced with more backticks than it contains (a typed answer may
    hold some)."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if "`" in text else f"`{text}`"


def verdict_text(feedback: Feedback) -> str:
    if feedback.skipped:
        return "✗ Skipped"
    mark = "✓" if feedback.correct else "✗"
    if isinstance(feedback.question, FreeQuestion):
        return f"{mark} Rubric score {feedback.score:.0%}"
    return f"{mark} Correct" if feedback.correct else f"{mark} Not quite"


RATE = Binding.Group("Rate", compact=True)  # Again, Hard, Good, Easy: said in the feedback too
RATINGS = ("Again", "Hard", "Good", "Easy")  # keys 1–4, as in Anki
NEXT_KEYS = "enter,n"
OWN_RATING_HINT = "*1–4 rate it yourself (Again, Hard, Good, Easy) · Ctrl+Z takes the answer back.*"
SCROLL_KEYS = (("up", "scroll_up"), ("down", "scroll_down"), ("pageup", "page_up"), ("pagedown", "page_down"),
               ("home", "scroll_home"), ("end", "scroll_end"))


class FeedbackScreen(Step[str | None]):
    """Dismisses with NEXT to go on, None to end the session, or TIME_UP when a round ends.
    A self-assessed free answer can have its rubric ticks changed here (e); any answer can be
    rated by hand (1–4) or taken back to be asked again (Ctrl+Z)."""

    BINDINGS = [
        Binding(NEXT_KEYS, "next", "Next"),
        Binding("e", "edit", "Edit score"),
        Binding("escape", "leave", "End session"),
        # In the footer as Anki users look for them: "1234 Rate", "^z Undo".
        *(Binding(str(n), f"rate({n})", name, group=RATE) for n, name in enumerate(RATINGS, start=1)),
        Binding("ctrl+z", "undo", "Undo"),
        # The app's h is hidden (Home's footer is full); for it, Ctrl+Q leaves this footer (in
        # help, and Esc ends the session): a free answer's keys filled 80 columns.
        Binding("h", "app.history", "History"),
        Binding("ctrl+q", "app.quit", "Quit", show=False, priority=True),
        # The body scrolls without taking the focus: focusing it restyled every block of the
        # feedback's Markdown, twice a change (on focus and on leaving), the costliest part.
        *(Binding(key, f"body('{action}')", show=False) for key, action in SCROLL_KEYS),
    ]
    AUTO_FOCUS = None

    # An Enter this soon after the feedback appeared was meant for the answer (a double Enter,
    # typed during the change): it must not skip the feedback unread. A rating key typed with the
    # answer rates it, as in Anki (issue 32), and says so ("Rating changed"). `n` always goes on,
    # and keys typed after it reach the next question (KeyHold).
    ENTER_GUARD_S = 0.3

    def __init__(self, session: Session, feedback: Feedback) -> None:
        super().__init__()
        self.session = session
        self.feedback = feedback
        self.shown_at = time.monotonic()  # again on mount; the clock of key events
        self.moving_on = False  # a key that goes on to the next question has come (see on_key)

    def compose(self) -> ComposeResult:
        # Built with the screen, not updated after it mounts: one layout pass, no second frame.
        with Horizontal(id="verdict-bar"):
            yield Static(verdict_text(self.feedback), id="verdict", markup=False, classes=self._verdict_class())
            if self.session.time_limit is not None:
                yield RoundTimer(lambda: seconds_left(self.session), id="timer")
        with VerticalScroll(id="feedback-body", can_focus=False):
            yield QuickMarkdown(self._markdown(), id="feedback")
        # Under the body, not at its end: the next review is in view however long the explanation.
        yield Static(self._review_line(), id="review-line", markup=False)
        yield FlatFooter()

    def on_mount(self) -> None:
        self.shown_at = time.monotonic()

    def on_key(self, event: events.Key) -> None:
        # The screen reads a burst's keys before the app runs the first one's binding: those
        # after Next are the next question's, and go on up to the app, which holds them for it.
        if self.moving_on:
            return
        guard = self.ENTER_GUARD_S  # 0 turns it off (Pilot's keys come faster than a person's)
        if guard and event.key == "enter" and event.time - self.shown_at < guard:
            event.stop()
            event.prevent_default()
        else:
            self.moving_on = event.key in NEXT_KEYS.split(",")

    def _verdict_class(self) -> str:
        return "-right" if self.feedback.correct else "-wrong"

    def _markdown(self) -> str:
        text = feedback_markdown(self.feedback)
        return f"{text}\n\n{OWN_RATING_HINT}" if self.session.schedules else text

    def _review_line(self) -> str:
        return review_line(self.feedback, self.session.now(), schedules=self.session.schedules)

    def _show(self) -> None:
        """Show the feedback again after it changed (a new rubric score or rating)."""
        verdict = self.query_one("#verdict", Static)
        verdict.update(verdict_text(self.feedback))
        verdict.set_classes(self._verdict_class())
        self.query_one("#feedback", Markdown).update(self._markdown())
        self.query_one("#review-line", Static).update(self._review_line())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "edit":
            return isinstance(self.feedback.question, FreeQuestion) and not self.feedback.skipped
        if action == "rate":
            return self.session.schedules
        return True

    def action_edit(self) -> None:
        from quizprep.tui.screens.rubric import RubricEditScreen

        given = self.feedback
        pending = PendingAssessment(given.showing, given.answer_id, given.response, given.elapsed_s)
        self.app.push_screen(RubricEditScreen(pending, met=given.rubric_met), self._reassess)

    def _reassess(self, met: tuple[bool, ...] | None) -> None:
        if met is None or met == self.feedback.rubric_met:  # kept as it was
            return
        try:
            self.feedback = self.session.reassess(self.feedback, met)
        except StoreError as error:
            self.notify(f"{error} The earlier score stands.", title="Assessment not changed", severity="error",
                        timeout=30, markup=False)
            return
        self._show()
        self.notify(f"Score {self.feedback.score:.0%}, rated {self.feedback.rating.name}.", title="Assessment changed")

    def action_rate(self, rating: int) -> None:
        from fsrs import Rating

        if Rating(rating) == self.feedback.rating:
            return
        try:
            self.feedback = self.session.rate(self.feedback, Rating(rating))
        except StoreError as error:
            self.notify(f"{error} The earlier rating stands.", title="Rating not changed", severity="error",
                        timeout=30, markup=False)
            return
        self._show()
        self.notify(f"Rated {self.feedback.rating.name}; next review "
                    f"{due_phrase(self.feedback.next_due, self.session.now())}.", title="Rating changed")

    def action_undo(self) -> None:
        try:
            self.session.undo(self.feedback)
        except StoreError as error:
            self.notify(f"{error} The answer stands.", title="Not undone", severity="error", timeout=30,
                        markup=False)
            return
        # The notes about the answer taken back ("Rating changed") would cover the field it comes
        # back to; what came back is said under that field.
        self.app.clear_notifications()
        self.dismiss(NEXT)

    def action_body(self, action: str) -> None:
        getattr(self.query_one("#feedback-body"), f"action_{action}")()

    def action_next(self) -> None:
        self.dismiss(NEXT)

    def action_leave(self) -> None:
        self.dismiss(None)

    def on_round_timer_expired(self) -> None:
        self.dismiss(TIME_UP)
