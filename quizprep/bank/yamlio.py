"""Safe YAML reading that remembers line numbers and refuses hostile input."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MAX_FILE_BYTES = 2 * 1024 * 1024


class YamlProblem(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


class LineDict(dict):
    """A mapping that knows the line of itself and of each of its keys."""

    line: int = 1
    key_lines: dict[Any, int]

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


class _Loader(yaml.SafeLoader):
    def compose_node(self, parent: Any, index: Any) -> Any:
        # Aliases make "billion laughs" bombs possible and banks never need them.
        if self.check_event(yaml.AliasEvent):
            line = self.peek_event().start_mark.line + 1
            raise YamlProblem(line, "YAML aliases (*name) are not allowed in question banks")
        return super().compose_node(parent, index)


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    mapping = LineDict()
    mapping.line = node.start_mark.line + 1
    mapping.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if not isinstance(key, (str, int, float, bool)) or key is None:
            raise YamlProblem(line, f"mapping keys must be plain scalars, got {type(key).__name__}")
        if key in mapping:
            raise YamlProblem(line, f"duplicate key {key!r} (first on line {mapping.key_lines[key]})")
        mapping[key] = loader.construct_object(value_node, deep=True)
        mapping.key_lines[key] = line
    return mapping


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_yaml(path: Path) -> Any:
    """Parse one bank file; every failure becomes a YamlProblem with a line number."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise YamlProblem(1, f"file is {size:,} bytes; banks are limited to {MAX_FILE_BYTES:,}")
    raw = path.read_bytes()
    if b"\x00" in raw:
        raise YamlProblem(raw[: raw.index(b"\x00")].count(b"\n") + 1, "binary data (NUL byte) in a YAML file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise YamlProblem(line, f"not UTF-8 text (byte {error.start})") from None
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader derives from SafeLoader
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else 1
        detail = " ".join(filter(None, [error.context, error.problem]))
        lines = text.splitlines()
        if 0 < line <= len(lines) and "\t" in lines[line - 1]:
            detail += " (tabs cannot indent YAML; use spaces)"
        raise YamlProblem(line, f"YAML syntax error: {detail}") from None
    except yaml.YAMLError as error:
        raise YamlProblem(1, f"YAML error: {error}") from None
    except RecursionError:
        raise YamlProblem(1, "YAML nesting too deep") from None
