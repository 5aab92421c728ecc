"""One question: the prompt as Markdown and the answer widget its kind needs."""
from __future__ import annotations

from typing import Callable

from textual import events
from textual.app import ComposeResult
from textual.geometry import Size
from textual.timer import Timer
from textual.widget import Widget
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, Static, TextArea

from quizprep.bank.model import ChoiceQuestion, NumericQuestion, Question
from quizprep.study.session import Feedback, InputError, PendingAssessment, Session, Showing, Tally
from quizprep.study.store import StoreError
from quizprep.tui.screens.step import Step
from quizprep.tui.outcome import TAKEN_BACK, TIME_UP
from quizprep.tui.widgets.answer_note import AnswerNote
from quizprep.tui.widgets.choice_picker import ChoicePicker
from quizprep.tui.widgets.free_answer import FreeAnswer
from quizprep.tui.widgets.numeric_answer import NumericAnswer
from quizprep.tui.widgets.flat_footer import FlatFooter
from quizprep.tui.widgets.quick import QuickMarkdown
from quizprep.tui.widgets.round_timer import RoundTimer

KIND_NAMES = {"choice": "multiple choice", "numeric": "numeric", "free": "free response"}
MODE_NAMES = {"practice": "Practice", "review": "Review", "mock": "Mock interview", "cram": "Cram"}
# A typed answer is saved this long after a keystroke (at most twice a second while typing):
# a kill -9 loses at most the last half second of it.
DRAFT_DELAY_S = 0.5
MOCK_LEFT = "The questions not answered yet count as not answered."
DRAFT_KEPT = "Your unsent answer is kept as a draft and comes back with this question."


def header_line(session: Session, showing: Showing) -> str:
    question: Question = showing.question
    stars = "★" * question.difficulty + "☆" * max(0, 3 - question.difficulty)
    follow_up = " · follow-up" if showing.follow_up_of else ""
    mode = MODE_NAMES.get(session.mode, session.mode.title())
    return f"{mode} {count_line(session.tally())} · {question.topic} · {KIND_NAMES[question.kind]}{follow_up} · {stars}"


def count_line(tally: Tally) -> str:
    """"3/14 · 2 again" while first asks last, "14/14 · again 1/2" once misses are asked again."""
    if tally.again_place:
        return f"{tally.planned}/{tally.planned} · again {tally.again_place}/{tally.again_planned}"
    again = f" · {tally.again_planned} again" if tally.again_planned else ""
    return f"{tally.place}/{tally.planned}{again}"


def seconds_left(session: Session) -> float:
    left = session.remaining_time()
    return left.total_seconds() if left is not None else float("inf")


class QuestionScreen(Step[Feedback | PendingAssessment | str | None]):
    """Asks one showing and commits the answer through the session the moment it is given.

    Dismisses with the Feedback (choice, numeric) or PendingAssessment (free response), None when
    the learner ends the session, TIME_UP when a mock round runs out of time, or TAKEN_BACK when
    Ctrl+Z took back the answer before this question (asked again first, this one after it)."""

    # Ctrl+G: no text field binds it, so it works while a number or an answer is half typed.
    BINDINGS = [Binding("escape", "leave", "End session"), Binding("ctrl+g", "skip", "Don't know"),
                # As on Anki's next card; a free answer's box undoes its typing first (FreeAnswer).
                Binding("ctrl+z", "take_back", "Undo last answer", show=False)]

    def __init__(self, session: Session, showing: Showing) -> None:
        super().__init__(classes=f"kind-{showing.question.kind}")
        self.session = session
        self.showing = showing
        self.draft_timer: Timer | None = None
        self.typed = ""  # the free or numeric answer typed so far, kept for the draft
        self.picked = showing.picked  # the choices picked so far, likewise
        self.unread_draft = ""  # why the draft could not be read, said once the note is there
        # Set once the answer (or skip) is saved: a second Enter that reached the screen before
        # the next one was in, or the round's end, must not answer the showing again.
        self.answered = False
        self.sized_for = Size(0, 0)  # the terminal's size the screen was last laid out for

    def compose(self) -> ComposeResult:
        with Horizontal(id="question-bar"):
            yield Static(header_line(self.session, self.showing), id="question-meta", markup=False)
            if self.session.time_limit is not None:
                yield RoundTimer(lambda: seconds_left(self.session), id="timer")
        with VerticalScroll(id="question-body"):
            reason = self.session.due_reasons.get(self.showing.question.id)
            if reason:
                yield Static(f"Due because of {reason}", id="due-reason", classes="hint", markup=False)
            yield QuickMarkdown(self.showing.prompt, id="prompt")
            yield from self._answer_widget()
            yield AnswerNote(id="answer-note")
        yield FlatFooter()

    def _answer_widget(self) -> ComposeResult:
        question = self.showing.question
        if isinstance(question, ChoiceQuestion):
            yield ChoicePicker(question, self.showing.choice_order, self.showing.picked, id="answer")
            return
        draft = self.typed = self._read_draft()
        if isinstance(question, NumericQuestion):
            yield NumericAnswer(question.unit, question.display_unit, draft, right=self._is_answer, id="answer")
        else:
            yield Static("Answer as you would in an interview; Ctrl+S compares it with the model answer.",
                         classes="hint")
            yield FreeAnswer(draft, id="answer")

    def _is_answer(self, text: str) -> bool:
        """Whether `text` would be judged right here: the hint's examples must not be."""
        from quizprep.bank.numeric import judge

        question, drawn = self.showing.question, self.showing.draw
        return isinstance(question, NumericQuestion) and drawn is not None and judge(question, drawn, text).correct

    def _read_draft(self) -> str:
        try:
            return self.session.draft(self.showing)
        except StoreError as error:
            self.unread_draft = f"Your draft could not be read: {error}"
            return ""

    def on_mount(self) -> None:
        # Focused here, before the first frame: focus() waits a turn of the loop, so the first
        # frame showed the footer without the answer's keys (Submit), and Textual's auto focus
        # took the scrolling body first, restyling it twice per change (issue 21).
        # Not scrolled to: a prompt taller than the screen opens at its top, where what is asked
        # is said (scrolled to the answer, a question with code showed the code and the choices
        # without its stem). The answer comes into view as it is typed or picked.
        self.sized_for = self.app.size
        answer = self.query_one("#answer")
        field = next(field for field in answer.walk_children(Widget, with_self=True) if field.focusable)
        self.set_focus(field, scroll_visible=False)
        if isinstance(answer, ChoicePicker):
            self.watch(answer, "picked", self._picks_changed, init=False)
        if self.unread_draft:
            self.note.say(self.unread_draft, "error")
        elif self.typed or self.showing.picked:
            self.note.say(f"What you {'typed' if self.typed else 'picked'} last time is back, ready to change.")

    def on_resize(self, event: events.Resize) -> None:
        # An answer being given stays in view as the terminal changes size: at 60×18 the prompt,
        # wrapped taller, pushed the choice picked out of view. Not as the screen opens (its first
        # layouts come as resizes too): what it shows first is on_mount's to say.
        if event.size == self.sized_for:
            return
        self.sized_for = event.size
        if self.picked or self.typed:
            self.call_after_refresh(self._answer_in_view)

    def _answer_in_view(self) -> None:
        answer = self.query_one("#answer")
        if isinstance(answer, ChoicePicker):
            answer.cursor_in_view()
        else:
            answer.scroll_visible(animate=False)

    def hands_in(self, key: str) -> bool:
        field = self.query_one("#answer")
        ends = "ctrl+s" if isinstance(field, FreeAnswer) else "enter"
        focused = self.focused
        return (key in (ends, "ctrl+g") and not self.answered and focused is not None
                and (focused is field or field in focused.ancestors))

    def on_input_changed(self, event: Input.Changed) -> None:
        self._draft_changed(event.value)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._draft_changed(event.text_area.text)

    @property
    def note(self) -> AnswerNote:
        return self.query_one(AnswerNote)

    def _picks_changed(self, picked: frozenset[int]) -> None:
        self.picked = picked
        self.note.clear()  # it spoke of the answer as it was
        self._keep_draft_soon()

    def _draft_changed(self, text: str) -> None:
        if text != self.typed:  # typed, not the draft put back as the field mounted
            self.query_one("#answer").scroll_visible(animate=False)
            self.note.clear()
        self.typed = text
        self._keep_draft_soon()

    def _keep_draft_soon(self) -> None:
        if self.draft_timer is None:
            self.draft_timer = self.set_timer(DRAFT_DELAY_S, self.save_draft)

    def save_draft(self) -> None:
        """Save what is typed now (the session keeps nothing once the question is answered)."""
        if self.draft_timer is not None:
            self.draft_timer.stop()
            self.draft_timer = None
        try:
            self.session.keep_draft(self.showing, self.typed, self.picked)
        except StoreError as error:
            self.note.say(f"Draft not saved: {error} It is still on screen.", "warning")

    def on_unmount(self) -> None:
        self.save_draft()  # quitting from a screen over this one

    def action_submit(self) -> None:
        if self.answered:
            return
        try:
            given = self._answer()
        except InputError as error:
            field = self.query_one("#answer")
            if isinstance(field, NumericAnswer):  # said on its live line
                field.refuse(str(error))
            else:
                self.note.say(f"Not judged yet: {error}", "warning")
            return
        except StoreError as error:  # nothing was saved; the answer stays on screen to send again
            again = "Ctrl+S" if isinstance(self.query_one("#answer"), FreeAnswer) else "Enter"
            self.note.say(f"Answer not saved: {error} It is still here: {again} tries again.", "error")
            return
        self._hand_in(given)

    def action_skip(self) -> None:
        """I don't know / show me: a wrong answer, then the feedback with the explanation."""
        if self.answered:
            return
        try:
            given = self.session.skip(self.showing)
        except StoreError as error:
            self.note.say(f"\"Don't know\" not saved: {error}", "error")
            return
        self._hand_in(given)

    def action_take_back(self) -> None:
        if self.answered:
            return
        self.save_draft()  # this question comes back after the one taken back, as it was left
        try:
            self.session.undo_before(self.showing)
        except ValueError as error:
            self.note.say(f"Nothing to undo: {error}.", "warning")
            return
        except StoreError as error:
            self.note.say(f"Not undone: {error} The earlier answer stands.", "error")
            return
        self.answered = True
        self.dismiss(TAKEN_BACK)

    def _hand_in(self, given: Feedback | PendingAssessment) -> None:
        self.answered = True
        self.dismiss(given)

    def _answer(self) -> Feedback | PendingAssessment:
        question = self.showing.question
        if isinstance(question, ChoiceQuestion):
            picked = self.query_one(ChoicePicker).picked
            if not picked:
                which = "the number of each choice that applies" if question.multiple else "the number of a choice"
                raise InputError(f"Nothing is picked yet: press {which} (Space picks the one under ▸), then Enter.")
            return self.session.answer_choice(self.showing, picked)
        if isinstance(question, NumericQuestion):
            return self.session.answer_numeric(self.showing, self.query_one(NumericAnswer).text)
        return self.session.answer_free(self.showing, self.query_one(FreeAnswer).text)

    def action_leave(self) -> None:
        self.leave_then(lambda: self.dismiss(None))

    def leave_then(self, leave: Callable[[], object], *, quitting: bool = False) -> None:
        """Save the draft, then `leave` (end the session, or quit the app when `quitting`) once
        the learner confirms it when a draft or a mock round would be left; at once otherwise."""
        self.save_draft()
        mock = self.session.time_limit is not None
        if not (mock or self.typed.strip()):
            leave()
            return
        from quizprep.tui.screens.confirm import ConfirmScreen

        def leave_if_confirmed(yes: bool | None) -> None:
            if yes:
                leave()

        if quitting:
            question, yes = f"Quit quizprep? {MOCK_LEFT if mock else DRAFT_KEPT}", "Quit"
        elif mock:
            question, yes = f"End the mock interview now? {MOCK_LEFT}", "End the round"
        else:
            question, yes = f"End the session? {DRAFT_KEPT}", "Leave"
        self.app.push_screen(ConfirmScreen(question, yes=yes, no="Keep going"), leave_if_confirmed)

    def on_round_timer_expired(self) -> None:
        """Time is up: what is on screen is handed in as it stands (a free response as typed,
        a picked choice, a number that reads), else the question counts as not answered."""
        if self.answered:  # the answer given just before is on its way to the feedback
            return
        while self.app.screen is not self and self in self.app.screen_stack:  # help or "end the round?" on top
            self.app.pop_screen()
        try:
            self._hand_in(self._answer())
        except (InputError, StoreError) as error:
            # What was there, not how to answer (an InputError's "press Enter", "try e.g."): there is no next try.
            reason = str(error) if isinstance(error, StoreError) else self._not_an_answer()
            kept = " What you typed is kept as its draft." if self.typed.strip() else ""
            self.notify(f"{self.showing.question.id} was not answered: {reason}.{kept}", title="Time is up",
                        severity="warning", timeout=15, markup=False)
            self.save_draft()
            self.dismiss(TIME_UP)

    def _not_an_answer(self) -> str:
        """Why what is on screen could not be handed in, said once the round has ended."""
        if isinstance(self.showing.question, ChoiceQuestion):
            return "nothing was picked"
        typed = " ".join(self.typed.split())
        if not typed:
            return "nothing was typed"
        return f"{typed[:40] + '…' if len(typed) > 40 else typed!r} could not be read as a number"
