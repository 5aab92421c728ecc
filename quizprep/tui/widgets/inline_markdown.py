"""One line of bank Markdown (`**not**`, `*x*`, `` `code` ``, ~~x~~) as styled Textual Content.

Only inline syntax is read: a choice that starts with "1." or "-" stays a choice, not a list."""
from __future__ import annotations

from markdown_it import MarkdownIt
from textual.content import Content, Span

INLINE_STYLES = {"strong_open": "bold", "em_open": "italic", "s_open": "strike"}
_parser = MarkdownIt("commonmark").enable("strikethrough")


def inline_markdown(text: str, code_style: str) -> Content:
    """`text` with its Markdown marks turned into styles. Inline code gets `code_style`, e.g. a
    component class (".name") of the widget that shows it, so it follows the theme."""
    parts: list[str] = []
    spans: list[Span] = []
    opened: list[tuple[str, int]] = []
    position = 0
    for token in _parser.parseInline(text)[0].children or []:
        if token.type in INLINE_STYLES:
            opened.append((INLINE_STYLES[token.type], position))
            continue
        if token.type.endswith("_close"):
            if token.type != "link_close" and opened:
                style, start = opened.pop()
                spans.append(Span(start, position, style))
            continue
        piece = {"softbreak": " ", "hardbreak": "\n"}.get(token.type, token.content)
        if token.type == "code_inline":
            spans.append(Span(position, position + len(piece), code_style))
        parts.append(piece)
        position += len(piece)
    return Content("".join(parts), spans=spans)
