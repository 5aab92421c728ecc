"""What the learner's process printed: drained from its pipe as it comes, with the sync tokens
that mark each message counted and removed, and the learner's frames read out of a
faulthandler dump (a hang or a crash)."""
from __future__ import annotations

import io
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quizprep.grader.bounds import tail
from quizprep.grader.learner_side import protocol
from quizprep.grader.submission_file import canonical, open_regular


@dataclass
class Frame:
    file: str
    line: int
    function: str
    code: str

    def __str__(self) -> str:
        code = f": {self.code}" if self.code else ""
        return f"{self.file}:{self.line} in {self.function}{code}"


class OutputCapture:
    """Drains the worker's stdout/stderr in a thread, keeping only the most recent bytes, and
    counts the sync tokens the worker writes before each message (they are not kept as output)."""

    def __init__(self, stream: Any, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self.syncs = 0
        self.buffer = bytearray()
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self.thread.start()

    def _drain(self, stream: Any) -> None:
        held = b""  # a chunk may end inside a token
        for chunk in iter(lambda: stream.read1(65536), b""):
            data = held + chunk
            syncs = data.count(protocol.OUTPUT_SYNC)
            data = data.replace(protocol.OUTPUT_SYNC, b"")
            held = _token_start_at_end(data)
            self._keep(data[: len(data) - len(held)], syncs)
        self._keep(held, 0)

    def _keep(self, data: bytes, syncs: int) -> None:
        with self.changed:
            self.total += len(data)
            self.buffer += data
            if len(self.buffer) > 4 * self.limit:
                del self.buffer[: len(self.buffer) - 4 * self.limit]
            self.syncs += syncs
            self.changed.notify_all()

    def wait_for_syncs(self, count: int, timeout: float) -> None:
        """Until `count` tokens have been read: the output printed before them is then all here."""
        with self.changed:
            self.changed.wait_for(lambda: self.syncs >= count, timeout)

    def mark(self) -> int:
        with self.changed:
            return self.total

    def since(self, mark: int) -> str:
        with self.changed:
            fresh = min(self.total - mark, len(self.buffer))
            data = bytes(self.buffer[len(self.buffer) - fresh :]) if fresh > 0 else b""
        return tail(data.decode("utf-8", "replace"), self.limit)


def _token_start_at_end(data: bytes) -> bytes:
    """The longest tail of `data` that is a proper prefix of the sync token."""
    token = protocol.OUTPUT_SYNC
    for size in range(min(len(token) - 1, len(data)), 0, -1):
        if data.endswith(token[:size]):
            return data[-size:]
    return b""


_DUMP_LINE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<function>\S+)', re.MULTILINE)


def frames_from_dump(output: str, learner_path: str) -> list[Frame]:
    """The learner's frames from a faulthandler dump (innermost last, as in tracebacks)."""
    blocks = re.split(r"(?=^(?:Current thread|Thread) 0x)", output, flags=re.MULTILINE)
    current = next((b for b in blocks if b.startswith("Current thread")), output)
    frames = [
        Frame(m["file"], int(m["line"]), m["function"], _source_line(m["file"], int(m["line"])))
        for m in _DUMP_LINE.finditer(current)
        if os.path.realpath(m["file"]) == learner_path
    ]
    return list(reversed(frames))  # faulthandler prints the innermost frame first


def strip_dump(output: str) -> str:
    """What the learner printed, without faulthandler's dump."""
    cut = re.search(r"^(Fatal Python error|Current thread 0x|Thread 0x)", output, flags=re.MULTILINE)
    return output[: cut.start()] if cut else output


def _source_line(path: str, line: int) -> str:
    """Line `line` of `path`, at most protocol.TEXT_LIMIT characters of it: a line is read in
    pieces of that size, so a line of a 10 MB comment never comes in whole."""
    limit = protocol.TEXT_LIMIT
    try:
        with io.TextIOWrapper(open_regular(canonical(Path(path))), encoding="utf-8", errors="replace") as source:
            number = 1
            while number < line:
                piece = source.readline(limit)
                if not piece:
                    return ""
                number += piece.endswith("\n")
            text = source.readline(limit)
    except OSError:
        return ""
    return text.strip() if len(text) < limit or text.endswith("\n") else text.strip()[: limit - 1] + "…"
