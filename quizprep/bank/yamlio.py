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
    if "maximum nesting depth" in detail:  # PyYAML >= 6.0.3 stops deep flow nesting itself
        return line, f"nested deeper than {MAX_DEPTH} levels"
    lines = text.splitlines()
    if 0 < line <= len(lines) and "\t" in lines[line - 1]:
        detail += " (tabs cannot indent YAML; use spaces)"
    return line, f"YAML syntax error: {detail}"


def _build(events: Any) -> Any:
    # The hot loop of a cold load (tens of thousands of events per bank): one type lookup per
    # event, the placing of values inlined, and scalars read through a per-file memo.
    stack: list[Any] = []  # open lists and LineDicts
    keys: list[Any] = []  # per open container: the key waiting for its value, or _NO_KEY
    root: Any = None
    documents = 0
    scalars: dict[tuple[Any, ...], Any] = {}
    for event in events:
        kind = type(event)
        if kind is _ScalarEvent:
            if event.anchor:
                raise YamlProblem(event.start_mark.line + 1, _ANCHORS)
            if event.style and event.implicit[1]:  # quoted or block text, no tag: a string
                value = event.value
            else:  # every result is immutable, so equal spellings (keys above all) share one entry
                key = (event.value, event.implicit, event.tag, event.style)
                value = scalars.get(key, _UNSEEN)
                if value is _UNSEEN:
                    value = scalars[key] = _scalar(event)
        elif kind is _MappingStart or kind is _SequenceStart:
            stack.append(_open(event, len(stack)))
            keys.append(_NO_KEY)
            continue
        elif kind is _MappingEnd or kind is _SequenceEnd:
            value = stack.pop()
            keys.pop()
        elif kind is yaml.AliasEvent:
            raise YamlProblem(event.start_mark.line + 1, _ANCHORS)
        elif kind is yaml.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise YamlProblem(event.start_mark.line + 1, "a bank file holds one YAML document")
            continue
        else:
            continue
        if not stack:
            root = value
            continue
        parent = stack[-1]
        if type(parent) is list:
            parent.append(value)
            continue
        key = keys[-1]
        if key is not _NO_KEY:
            parent[key] = value
            keys[-1] = _NO_KEY
            continue
        _note_key(parent, value, event.start_mark.line + 1)
        keys[-1] = value
    return root


def _open(event: Any, depth: int) -> list[Any] | LineDict:
    line = event.start_mark.line + 1
    if event.anchor:
        raise YamlProblem(line, _ANCHORS)
    _check_tag(event, line)
    if depth >= MAX_DEPTH:
        raise YamlProblem(line, f"nested deeper than {MAX_DEPTH} levels")
    if type(event) is _SequenceStart:
        return []
    mapping = LineDict()
    mapping.line, mapping.key_lines = line, {}
    return mapping


def _note_key(mapping: LineDict, key: Any, line: int) -> None:
    if isinstance(key, (list, dict)) or key is None:
        raise YamlProblem(line, "mapping keys must be plain text or numbers")
    if key in mapping.key_lines:
        raise YamlProblem(line, f"duplicate key {key!r} (first on line {mapping.key_lines[key]})")
    mapping.key_lines[key] = line


_NO_KEY = object()
_UNSEEN = object()
_ANCHORS = "YAML anchors and aliases (&name, *name) are not allowed in banks"
_ScalarEvent, _MappingStart, _MappingEnd = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.MappingEndEvent
_SequenceStart, _SequenceEnd = yaml.SequenceStartEvent, yaml.SequenceEndEvent


def _check_tag(event: Any, line: int) -> None:
    if event.tag and not getattr(event, "implicit", True):
        raise YamlProblem(line, f"YAML tags such as {event.tag!r} are not allowed in banks")


def _scalar(event: yaml.ScalarEvent) -> Any:
    """A scalar as YAML 1.1 (PyYAML's safe resolver) reads it: text, number, bool or null."""
    line = event.start_mark.line + 1 if event.start_mark else 1
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
        # no mark: a failure is reported with `line`, from the problem alone
        return _constructor.construct_object(yaml.ScalarNode(tag, event.value))
    except ConstructorError as error:
        raise YamlProblem(line, f"cannot read {event.value!r}: {error.problem}") from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        shown = event.value if len(event.value) <= 40 else f"{event.value[:20]}…"
        raise YamlProblem(line, f"cannot read {shown!r}: too many digits for a number") from None
