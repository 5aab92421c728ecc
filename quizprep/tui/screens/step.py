"""The screens of a session's flow (question, rubric, feedback, report) replace one another.

Dismissing a step hands its result to the flow, which then switches the next screen in its
place: Home is never popped to and pushed from in between, so it never flashes. Keys typed
while one step gives way to the next are held and replayed to the next step once it has
focused its answer field, so a digit typed just after Next lands in the next answer. A step
pushed on its own (e.g. the rubric opened again to edit it) dismisses as any other screen."""
from __future__ import annotations

import asyncio
from typing import TypeVar

from textual import events
from textual.app import App
from textual.await_complete import AwaitComplete
from textual.geometry import Size

from quizprep.tui.screens.styled import StyledOnMount

ResultT = TypeVar("ResultT")


def typed_enter(newline: events.Key) -> events.Key:
    """Enter for a Ctrl+J. A terminal in line mode turns Enter into a newline, which Textual
    reads as Ctrl+J: an answer typed ahead while `quizprep` starts, before Textual takes the
    terminal, ends so. Nothing in the app binds Ctrl+J, and shells read it as Enter too."""
    enter = events.Key("enter", "\r")
    enter.time = newline.time
    return enter


class KeyHold:
    """The keys typed between two steps, in order; None while no change is under way.

    A key that hands an answer in (Enter on a number) or edits through a binding (Backspace)
    does its work once it has come back from its field to the app, behind the keys sent to the
    field after it: those would join the answer before it is handed in, or be deleted by the
    Backspace typed before them. So the keys typed after it are held from the moment it is
    sent: for the next step when the answer is taken, back to the field otherwise."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.keys: list[events.Key] | None = None
        self.trigger: events.Key | None = None  # the hand-in key on its way; None once it is handled
        self.until_step = False  # the trigger starts a session: its keys wait for the first step

    def start(self) -> None:
        """Hold every key from now until the next step has mounted (a change is under way)."""
        if self.keys is None:
            self.keys = []
        self.trigger = None

    def hold_behind(self, key: events.Key, *, until_step: bool = False) -> None:
        """Hold the keys typed after `key` until `key` has done its work (see `handled`), or,
        `until_step`, until the step it asks for has mounted or `let_go` says none will."""
        if self.keys is None:
            self.keys, self.trigger, self.until_step = [], key, until_step

    def take(self, event: events.Event) -> bool:
        """Hold `event` if it is a key typed during a change; False to let it through."""
        if self.keys is None or not isinstance(event, events.Key) or event is self.trigger:
            return False
        if self.trigger is not None and event.is_forwarded:
            return False  # sent before the hand-in key, back from its widget to run its binding
        self.keys.append(event)
        return True

    def handled(self, event: events.Event) -> None:
        """`event` has been through its widget and its bindings: when it is the hand-in key and
        no step change started (the answer was refused), the keys after it go on as typed."""
        if event is self.trigger:
            self.trigger = None
            if not self.until_step:
                self.release()

    def let_go(self) -> None:
        """No step is coming (a flow ended, or nothing to ask): the keys held go where they were typed."""
        if self.keys is not None:
            self.release()

    def release(self) -> None:
        """Replay the held keys, after whatever the app is doing now (the new step's focus)."""
        self.app.call_later(self._replay)

    async def _replay(self) -> None:
        keys, self.keys, self.until_step = self.keys or [], None, False
        for key in keys:
            replay = events.Key(key.key, key.character)
            replay.time = key.time  # when it was typed: the feedback's Enter guard reads it
            await self.app.on_event(replay)


class Step(StyledOnMount[ResultT]):
    def hands_in(self, key: str) -> bool:
        """Whether `key`, typed now, hands this step's answer in through its focused field."""
        return False

    def comes_back(self, event: events.Key) -> bool:
        """Whether `event` does its work only once it has come back up to the app: a hand-in
        key, or one the focused field binds (Backspace, Delete, arrows...). Textual runs those
        bindings there, after the printable keys typed behind the key reached the field, so a
        burst's `qx⌫k` read `qk` only when the keys after ⌫ are held until it has (KeyHold)."""
        if self.hands_in(event.key):
            return True
        bound = None if event.is_printable or self.focused is None else self.active_bindings.get(event.key)
        return bound is not None and bound.node is self.focused

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.handed: asyncio.Future[ResultT | None] | None = None  # set while it is a step of a flow
        self.key_hold: KeyHold | None = None  # the flow's, likewise

    def _screen_resized(self, size: Size) -> None:
        # A new screen's first layout gives it its size, and Textual answers the Resize that
        # follows with a second full layout and repaint at the size it was just laid out at. What
        # the first layout changed (sizes, a scrollbar) is laid out again on the next frame anyway.
        # The size laid out at is the compositor's: the screen's own size is the terminal's
        # already, before a resize is laid out (comparing with it skipped every resize, issue 32).
        if size != self._compositor.size:
            super()._screen_resized(size)

    def dismiss(self, result: ResultT | None = None) -> AwaitComplete:
        if self.handed is None:
            return super().dismiss(result)
        if not self.handed.done():  # a second key before the next screen is in: the first one counts
            if self.key_hold is not None:
                self.key_hold.start()
            self.handed.set_result(result)
        return AwaitComplete.nothing()

    def on_mount(self) -> None:
        # Runs after the subclass's on_mount, which focused the answer field.
        if self.key_hold is not None and self.key_hold.keys is not None:
            self.key_hold.release()


async def show_step(app: App, step: Step[ResultT], hold: KeyHold) -> ResultT | None:
    """Show `step` in place of the flow's current step (over the screen below for the first one)
    and wait for its result. The step stays on screen until the next one replaces it or
    `end_flow` takes it away."""
    step.handed = asyncio.get_running_loop().create_future()
    step.key_hold = hold
    hold.start()  # until the step has mounted and focused its answer field
    current = app.screen
    if isinstance(current, Step) and current.handed is not None:
        await app.switch_screen(step)
    else:
        await app.push_screen(step)
    return await step.handed


async def end_flow(app: App, hold: KeyHold) -> None:
    """Take the flow's last step away, back to the screen the flow started from."""
    if isinstance(app.screen, Step) and app.screen.handed is not None:
        await app.pop_screen()
    hold.let_go()
