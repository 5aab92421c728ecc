"""The mapping type bank files are read into (kept apart from yamlio so that loading cached banks
never imports the YAML parser)."""
from __future__ import annotations

from typing import Any


class LineDict(dict):
    """A mapping that knows the line of itself and of each of its keys."""

    line: int = 1
    key_lines: dict[Any, int]

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)
