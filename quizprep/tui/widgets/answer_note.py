"""The line under a question's answer field that says what is to be said about it: why it was
not judged, that a draft came back, that it could not be saved. A toast would stand over the field
at small sizes; this stays beside it and goes once the answer changes."""
from __future__ import annotations

from typing import Literal

from textual.widgets import Static

Tone = Literal["information", "warning", "error"]


class AnswerNote(Static):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.display = False

    def say(self, text: str, tone: Tone = "information") -> None:
        self.update(text)
        self.set_classes(f"-{tone}")
        self.display = True
        self.call_after_refresh(self.scroll_visible, animate=False)

    def clear(self) -> None:
        if self.display:
            self.update("")
            self.display = False
