"""The text area for a free response; Ctrl+S hands it in (Enter is a new line, `?` a character)."""
from __future__ import annotations

from textual.binding import Binding
from textual.widgets import TextArea


class FreeAnswer(TextArea):
    BINDINGS = [Binding("ctrl+s", "screen.submit", "Submit"),
                Binding("ctrl+z,super+z", "undo_or_take_back", "Undo", show=False)]

    def __init__(self, text: str = "", *, id: str | None = None) -> None:
        super().__init__(text, id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus")

    async def action_undo_or_take_back(self) -> None:
        """Undo typing; in an empty box with nothing typed, take back the answer before this
        question as Ctrl+Z does on the other kinds (the screen's take_back)."""
        if self.text or self.history.undo_stack:
            self.undo()
        else:
            await self.run_action("screen.take_back")

    def on_mount(self) -> None:
        self.move_cursor(self.document.end)  # a restored draft is typed on, not before

    def on_resize(self) -> None:
        # TextArea rewraps its text on a resize but repaints only some rows: rows drawn with the
        # old line breaks stayed on screen, showing words twice. Repaint them all.
        self.refresh()
        if self.has_focus:  # a shorter terminal can push the box below the screen's edge
            self.call_after_refresh(self.scroll_visible, animate=False)
