"""Textual's Markdown, built in the pass that builds its screen.

On every question and feedback screen it cost more than the rest of a screen change (issue 21,
profiled in benchmarks/screen_change.py): it parsed its text in a worker thread after mounting,
then removed and mounted its blocks in a second pass. It looks the same as Textual's widget,
whose CSS rules it keeps (a type selector matches a subclass).
A bullet list of one-paragraph items, as every list of the feedback, is one widget instead of
four per item: a screen's restyling and layout passes cost in proportion to its widgets."""
from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult, RenderResult
from textual.content import Content
from textual.events import Mount
from textual.geometry import Size
from textual.widgets import Markdown
# The block classes are not exported by textual.widgets.markdown (an import error here would say they moved).
from textual.widgets._markdown import MarkdownBulletList, MarkdownListItem, MarkdownParagraph


class FlatBulletList(MarkdownBulletList):
    """A bullet list drawn as Textual's is (bullet, then the item's text wrapped beside it), in
    one widget when each item is a single paragraph; any other list is composed as usual."""

    COMPONENT_CLASSES = {"flat-bullet"}
    DEFAULT_CSS = """
    FlatBulletList > .flat-bullet { color: $text-primary; }
    FlatBulletList:light > .flat-bullet { color: $text-secondary; }
    """

    items: list[tuple[str, Content]] | None = None  # (bullet, text) when drawn flat
    _lines: tuple[int, Content] | None = None  # the text wrapped at a width, kept for that width

    def compose(self) -> ComposeResult:
        blocks = self._blocks
        if all(isinstance(block, MarkdownListItem) and len(block._blocks) == 1
               and isinstance(block._blocks[0], MarkdownParagraph) for block in blocks):
            self.items = [(block.bullet, block._blocks[0]._content) for block in blocks
                          if isinstance(block, MarkdownListItem)]
            blocks.clear()
            return
        yield from super().compose()

    def wrapped(self, width: int) -> Content:
        if self._lines is None or self._lines[0] != width:
            lines: list[Content] = []
            for bullet, text in self.items or ():
                indent = cell_len(bullet)
                for number, line in enumerate(text.wrap(max(1, width - indent))):
                    lines.append((Content.styled(bullet, ".flat-bullet") if number == 0 else Content(" " * indent))
                                 + line)
            self._lines = (width, Content("\n").join(lines))
        return self._lines[1]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.items is None:
            return super().get_content_height(container, viewport, width)
        return len(self.wrapped(width).split(allow_blank=True))

    def render(self) -> RenderResult:
        if self.items is None:
            return super().render()
        return self.wrapped(self.size.width)


class QuickMarkdown(Markdown):
    """Markdown whose first text is parsed and composed with its screen (later `update`s work
    as Markdown's)."""

    BLOCKS = {**Markdown.BLOCKS, "bullet_list_open": FlatBulletList}

    def compose(self) -> ComposeResult:
        text, self._initial_markdown = self._initial_markdown or "", None
        self._markdown = text
        yield from self._build_from_source(text)

    # Textual's Markdown overrides Widget's plain _on_mount with a coroutine; this one replaces Markdown's.
    async def _on_mount(self, event: Mount) -> None:  # type: ignore[override]
        event.prevent_default()  # Markdown's own would parse the text again and swap the blocks
