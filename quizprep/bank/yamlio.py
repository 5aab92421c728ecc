"""Safe YAML reading that remembers line numbers and refuses hostile input.

Documents are built straight from libyaml's event stream (pure-Python PyYAML where libyaml is
missing): one pass, no recursion, so depth, aliases and tags are checked before anything grows.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.resolver import Resolver

from quizprep.bank.linedict import LineDict

MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_DEPTH = 32
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR_TAG = "tag:yaml.org,2002:str"
_SAFE_SCALAR_TAGS = {f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null")}
_resolver = Resolver()
_constructor = SafeConstructor()


class YamlProblem(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


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
        return _build(yaml.parse(text, Loader=_Loader))
    except yaml.MarkedYAMLError as error:
        raise YamlProblem(*_describe(error, text)) from None
    except yaml.YAMLError as error:
        raise YamlProblem(1, f"YAML error: {error}") from None


def _describe(error: yaml.MarkedYAMLError, text: str) -> tuple[int, str]:
    mark = error.problem_mark or error.context_mark
    line = mark.line + 1 if mark else 1
    detail = " ".join(filter(None, [error.context, error.problem]))
    lines = text.splitlines()
    if 0 < line <= len(lines) and "\t" in lines[line - 1]:
        detail += " (tabs cannot indent YAML; use spaces)"
    return line, f"YAML syntax error: {detail}"


def _build(events: Any) -> Any:
    stack: list[Any] = []  # open lists and LineDicts; a LineDict waiting for a value holds its key
    pending_keys: list[Any] = []
    root: Any = None
    documents = 0
    for event in events:
        line = event.start_mark.line + 1
        if isinstance(event, yaml.ScalarEvent):
            if event.anchor:
                raise YamlProblem(line, _ANCHORS)
            value = _scalar(event, line)
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if event.anchor:
                raise YamlProblem(line, _ANCHORS)
            _check_tag(event, line)
            if len(stack) >= MAX_DEPTH:
                raise YamlProblem(line, f"nested deeper than {MAX_DEPTH} levels")
            container: Any = [] if isinstance(event, yaml.SequenceStartEvent) else LineDict()
            if isinstance(container, LineDict):
                container.line, container.key_lines = line, {}
            stack.append(container)
            pending_keys.append(_NO_KEY)
            continue
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            value = stack.pop()
            pending_keys.pop()
        elif isinstance(event, yaml.AliasEvent):
            raise YamlProblem(line, _ANCHORS)
        elif isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise YamlProblem(line, "a bank file holds one YAML document")
            continue
        else:
            continue
        if not stack:
            root = value
        else:
            _place(stack, pending_keys, value, line)
    return root


_NO_KEY = object()
_ANCHORS = "YAML anchors and aliases (&name, *name) are not allowed in banks"


def _place(stack: list[Any], pending_keys: list[Any], value: Any, line: int) -> None:
    parent = stack[-1]
    if isinstance(parent, list):
        parent.append(value)
        return
    key = pending_keys[-1]
    if key is _NO_KEY:
        if isinstance(value, (list, dict)) or value is None:
            raise YamlProblem(line, "mapping keys must be plain text or numbers")
        if value in parent.key_lines:
            raise YamlProblem(line, f"duplicate key {value!r} (first on line {parent.key_lines[value]})")
        parent.key_lines[value] = line
        pending_keys[-1] = value
        return
    parent[key] = value
    pending_keys[-1] = _NO_KEY


def _check_tag(event: Any, line: int) -> None:
    if event.tag and not getattr(event, "implicit", True):
        raise YamlProblem(line, f"YAML tags such as {event.tag!r} are not allowed in banks")


def _scalar(event: yaml.ScalarEvent, line: int) -> Any:
    if event.tag and event.tag != "!" and not event.implicit[0] and not event.implicit[1]:
        if event.tag not in _SAFE_SCALAR_TAGS:
            raise YamlProblem(line, f"YAML tags such as {event.tag!r} are not allowed in banks")
        tag = event.tag
    elif event.style:  # quoted or block text is always a string
        return event.value
    else:
        tag = _resolver.resolve(yaml.ScalarNode, event.value, event.implicit)
    if tag == _STR_TAG:
        return event.value
    try:
        return _constructor.construct_object(yaml.ScalarNode(tag, event.value, event.start_mark))
    except ConstructorError as error:
        raise YamlProblem(line, f"cannot read {event.value!r}: {error.problem}") from None
