"""What a report may carry of the learner's doing: every learner-derived text capped so that a
whole report stays under REPORT_BYTES as JSON (and so as results.json), and control characters
shown as escapes wherever text reaches a terminal.

The learner's process chooses its printed output, its error messages, its frames (file names and
source lines) and its file name; a few megabytes of each, repeated in every check, made reports of
hundreds of megabytes, and an ESC in any of them could redraw the instructor's terminal.
"""
from __future__ import annotations

import dataclasses
import json
import re
import unicodedata
from typing import TYPE_CHECKING, Any

from quizprep.grader.spec import CheckResult

if TYPE_CHECKING:  # grade.py bounds its reports with this module
    from quizprep.grader.grade import GradeReport

REPORT_BYTES = 1 << 20
FRAMES_KEPT = 20  # the innermost, as tracebacks show them last
FIRST_TEXT_CHARS = 4096
FIRST_FRAME_CHARS = 600
# What a terminal acts on or a reader cannot see, by Unicode category: controls (C0, DEL, C1), format
# characters (bidirectional marks and overrides, zero-width spaces and joiners, the soft hyphen, BOM),
# line and paragraph separators, lone surrogates. A zero-width space made "alice\u200b.py" a second
# "alice.py" in a class table (third red team).
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_NOT_PLAIN = re.compile(r"[^\x20-\x7e\n\t]")
_NOT_PLAIN_OR_BREAK = re.compile(r"[^\x20-\x7e]")
# Python holds them in a str but UTF-8 cannot encode them: a lone surrogate from a JSON reply
# ("\ud800"), or a byte of a non-UTF-8 file name as os.listdir spells it (surrogateescape)
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_BYTES = range(0xDC80, 0xDD00)


def printable(text: str, *, one_line: bool = False) -> str:
    """`text` with its control characters written as escapes (ESC as \\x1b, CR as \\r...), so
    that it prints as it is; `one_line` escapes newlines and tabs too (a file name, a cell)."""
    return (_NOT_PLAIN_OR_BREAK if one_line else _NOT_PLAIN).sub(_escape_hidden, text)


def json_text(payload: Any, *, indent: int | None = None) -> str:
    """`payload` as JSON with every hidden character (see `_HIDDEN`) written as a \\u escape, so the
    text decodes to the same data and prints as it is: json.dumps leaves C1, DEL, bidirectional and
    zero-width characters raw when it keeps non-ASCII text readable."""
    return _NOT_PLAIN.sub(_json_escape_hidden, json.dumps(payload, ensure_ascii=False, indent=indent, default=str))


def encodable(text: str) -> str:
    """`text` with what UTF-8 cannot encode written as escapes: a file name's byte 0xff as \\xff,
    a lone surrogate as \\ud800; everything else unchanged."""
    return _SURROGATE.sub(_escape, text)


def encodable_data(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, texts, numbers) with every text `encodable`."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {encodable_data(key): encodable_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [encodable_data(item) for item in value]
    return value


def _hidden(char: str) -> bool:
    return char in "\n\t" or unicodedata.category(char) in _HIDDEN


def _escape_hidden(match: re.Match[str]) -> str:
    return _escape(match) if _hidden(match[0]) else match[0]


def _json_escape_hidden(match: re.Match[str]) -> str:
    # outside strings JSON has only newlines and spaces, which are plain; json.dumps writes the
    # escape (a surrogate pair above U+FFFF)
    return json.dumps(match[0])[1:-1] if _hidden(match[0]) else match[0]


def _escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    if code in _ESCAPED_BYTES:
        return f"\\x{code - 0xDC00:02x}"
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(match[0])
    if named:
        return named
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def tail(text: str, limit: int) -> str:
    """The last `limit` characters of printed output, after a note of how many earlier ones are left out."""
    if len(text) <= limit:
        return text
    return f"[… {len(text) - limit} earlier characters not shown]\n" + text[-limit:]


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, the cut marked with '…'."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def bounded(report: GradeReport) -> GradeReport:
    """`report` with its checks' texts and frames capped, tighter until it fits in REPORT_BYTES."""
    text_chars, frame_chars = FIRST_TEXT_CHARS, FIRST_FRAME_CHARS
    report.file = encodable(report.file)
    report.environment, report.extra = encodable_data(report.environment), encodable_data(report.extra)
    originals = list(report.checks)
    while True:
        report.checks = [_capped(check, text_chars, frame_chars) for check in originals]
        if _size(report) <= REPORT_BYTES or text_chars <= 16:
            return report
        text_chars, frame_chars = text_chars // 2, max(frame_chars // 2, 16)


def _capped(check: CheckResult, text_chars: int, frame_chars: int) -> CheckResult:
    def capped(text: str) -> str:
        return cut(encodable(text), text_chars)

    output = tail(encodable(check.output), text_chars)
    return dataclasses.replace(
        check, message=capped(check.message), diagnosis=capped(check.diagnosis), hint=capped(check.hint),
        tried=capped(check.tried), smallest=capped(check.smallest), where=capped(check.where), output=output,
        test_code=capped(check.test_code),
        traceback=[cut(encodable(frame), frame_chars) for frame in check.traceback[-FRAMES_KEPT:]])


def _size(report: GradeReport) -> int:
    payload = {"file": report.file, "checks": [dataclasses.asdict(check) for check in report.checks],
               "environment": report.environment, "extra": report.extra}
    return len(json_text(payload).encode())
