"""Screens whose first appearance keeps the styles their widgets got as they mounted."""
from __future__ import annotations

from typing import TypeVar

from textual import events
from textual.screen import Screen

ResultT = TypeVar("ResultT")


class StyledOnMount(Screen[ResultT]):
    """Every widget of a new screen is styled as it mounts, just before the screen's first
    ScreenResume, on which Textual restyles the whole screen again: a sixth of a screen change
    (issue 21), and 1.5 % of the instructions of a start to Home (issue 32). Later resumes
    restyle as Textual does (the theme or the terminal may have changed under another screen)."""

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.styled_on_mount = True

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        if self.styled_on_mount:
            self.styled_on_mount = False
            event.refresh_styles = False
