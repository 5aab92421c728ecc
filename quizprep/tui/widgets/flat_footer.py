"""The compact Footer of every screen, drawn as one widget.

Textual's Footer is a container of one widget per key, re-composed whenever the keys change:
on the two screens a session goes back and forth between, those widgets cost as much as the
rest of the screen change (issue 21, benchmarks/screen_change.py). This draws the same cells,
with the same theme variables and compact spacing, from the bindings, and only repaints when
they change. Clicking a key presses it, as on Textual's."""
from __future__ import annotations

from collections import defaultdict
from itertools import groupby
from typing import NamedTuple

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget


KeySpan = tuple[int, int, str]  # where a key is drawn in the row (start, end) and the key
# The key that lists every key: kept when a narrow terminal leaves no room for the others.
HELP_ACTIONS = ("help", "app.help")


class Piece(NamedTuple):
    """The cells of one key (or group of keys) and where each key lies in them, for clicks."""

    text: Text
    keys: list[KeySpan]
    action: str


def cells(pieces: list[Piece]) -> int:
    """The cells `pieces` need in a row, the last one's trailing space left to the edge."""
    total = sum(piece.text.cell_len for piece in pieces)
    return total - 1 if pieces and pieces[-1].text.plain.endswith(" ") else total


def fitted(pieces: list[Piece], width: int) -> list[Piece]:
    """`pieces` without the last keys that do not fit in `width` cells, help's kept: the keys left
    out are listed in help (issue 32: at 60 columns the row was cut mid-word, help's key with it)."""
    kept = list(pieces)
    while cells(kept) > width:
        others = [piece for piece in kept if piece.action not in HELP_ACTIONS]
        if not others:
            break
        kept.remove(others[-1])
    return kept


class FlatFooter(Widget, can_focus=False):
    COMPONENT_CLASSES = {"footer-key--key", "footer-key--description", "flat-footer--item", "flat-footer--label"}
    DEFAULT_CSS = """
    FlatFooter {
        color: $footer-foreground;
        background: $footer-background;
        dock: bottom;
        height: 1;
        text-wrap: nowrap;
        text-overflow: clip;
        & > .footer-key--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .footer-key--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        & > .flat-footer--item {
            background: $footer-item-background;
        }
        & > .flat-footer--label {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
    }
    """
    ALLOW_SELECT = False

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[KeySpan] = []  # (start, end, key) of each drawn key, for clicks
        self.drawn: list[tuple[Binding, bool]] | None = None  # the bindings the last render showed

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen) -> None:
        # Focus moving between widgets whose bindings are all hidden (Home's table taking focus
        # as the first frame is drawn) changes nothing shown: no second render.
        if self.is_attached and screen is self.screen and self.shown() != self.drawn:
            self.refresh()

    def shown(self) -> list[tuple[Binding, bool]]:
        """The first binding of each action shown, and whether it is enabled, in Footer's order."""
        by_action: defaultdict[str, list[tuple[Binding, bool]]] = defaultdict(list)
        for _, binding, enabled, _tooltip in self.screen.active_bindings.values():
            if binding.show:
                by_action[binding.action].append((binding, enabled))
        return [entries[0] for entries in by_action.values()]

    def render(self) -> Text:
        text, self.keys = Text(), []
        self.drawn = self.shown()
        for piece in fitted(self.pieces(self.drawn), self.size.width):
            self.keys += [(len(text) + start, len(text) + end, key) for start, end, key in piece.keys]
            text.append_text(piece.text)
        return text

    def pieces(self, shown: list[tuple[Binding, bool]]) -> list[Piece]:
        """One piece per key `shown` (or group of keys), in Footer's order."""
        item = self.get_component_rich_style("flat-footer--item")
        key_style = item + self.get_component_rich_style("footer-key--key", partial=True)
        description_style = item + self.get_component_rich_style("footer-key--description", partial=True)
        label_style = self.get_component_rich_style("flat-footer--label")
        pieces: list[Piece] = []

        def add_key(text: Text, keys: list[KeySpan], binding: Binding, enabled: bool,
                    description: str) -> None:
            dim = Style() if enabled else Style(dim=True)
            start = len(text)
            text.append(self.app.get_key_display(binding), key_style + dim)
            if description:
                text.append(f" {description}", description_style + dim)
            keys.append((start, len(text), binding.key))

        for group, entries in groupby(shown, lambda entry: entry[0].group):
            members = list(entries)
            if group is not None and len(members) > 1:
                text, keys = Text(" " if group.compact else ""), list[KeySpan]()  # the group's left padding
                for binding, enabled in members:
                    gap = "" if group.compact else " "
                    text.append(gap)
                    add_key(text, keys, binding, enabled, "")
                    text.append(gap)
                text.append(" ")
                text.append(group.description, label_style)
                text.append(" ")
                pieces.append(Piece(text, keys, binding.action))
            else:
                for binding, enabled in members:
                    text, keys = Text(), list[KeySpan]()
                    add_key(text, keys, binding, enabled, binding.description)
                    text.append(" ")
                    pieces.append(Piece(text, keys, binding.action))
        return pieces

    def on_click(self, event: events.Click) -> None:
        for start, end, key in self.keys:
            if start <= event.x < end:
                self.app.simulate_key(key)
                return
