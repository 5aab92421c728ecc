"""Textual's Footer and Markdown, built in the pass that builds their screen.

Both are on every question and feedback screen, and both cost more than the rest of a screen
change put together (issue 21, profiled in benchmarks/screen_change.py): the Footer re-composed
its keys from scratch on every bindings signal (focus moving to the answer field, the screen
resuming, an app check), about six times per change; Markdown parsed its text in a worker
thread after mounting, then removed and mounted its blocks in a second pass. They look the same
as Textual's widgets, whose CSS rules they keep (a type selector matches a subclass)."""
from __future__ import annotations

from typing import Hashable

from textual.app import ComposeResult
from textual.events import Mount
from textual.screen import Screen
from textual.widgets import Footer, Markdown


class QuickFooter(Footer):
    """A Footer that re-composes only when the keys it shows have changed."""

    def __init__(self, *, compact: bool = False) -> None:
        super().__init__(compact=compact)
        self.shown: tuple[Hashable, ...] | None = None  # the keys composed last

    def keys(self) -> tuple[Hashable, ...]:
        """What `compose` would show now: one entry per shown binding, in order."""
        return tuple((binding.key, binding.action, binding.description, binding.group, enabled, tooltip)
                     for _, binding, enabled, tooltip in self.screen.active_bindings.values() if binding.show)

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if not self.is_attached:
            return
        keys = self.keys()
        if keys != self.shown:
            self.shown = keys
            await self.recompose()


class QuickMarkdown(Markdown):
    """Markdown whose first text is parsed and composed with its screen (later `update`s work
    as Markdown's)."""

    def compose(self) -> ComposeResult:
        text, self._initial_markdown = self._initial_markdown or "", None
        self._markdown = text
        yield from self._build_from_source(text)

    async def _on_mount(self, event: Mount) -> None:
        event.prevent_default()  # Markdown's own would parse the text again and swap the blocks
