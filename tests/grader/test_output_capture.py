"""The learner's printed output is captured whole before a result is reported, however the
pipe happens to split it."""
from __future__ import annotations

import io
import os
import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from quizprep.grader.output import OutputCapture
from quizprep.grader.learner_side.protocol import OUTPUT_SYNC


class Chunks(io.RawIOBase):
    """A stream that returns the given pieces one read at a time."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = list(pieces)

    def read1(self, size: int = -1) -> bytes:
        return self.pieces.pop(0) if self.pieces else b""


@settings(max_examples=80, deadline=None)
@given(texts=st.lists(st.binary(max_size=40).filter(lambda b: b"\x1e" not in b), min_size=1, max_size=5),
       cuts=st.lists(st.integers(0, 400)))
def test_tokens_are_counted_and_removed_wherever_the_chunks_split(texts, cuts):
    stream = OUTPUT_SYNC.join(texts)
    edges = sorted({0, len(stream), *(c % (len(stream) + 1) for c in cuts)})
    capture = OutputCapture(Chunks([stream[a:b] for a, b in zip(edges, edges[1:])]), limit=10_000)
    capture.thread.join(5)
    assert capture.syncs == len(texts) - 1
    assert bytes(capture.buffer) == b"".join(texts)


def test_waiting_for_the_token_waits_for_output_still_in_the_pipe():
    read_end, write_end = os.pipe()

    def slow_writer() -> None:
        time.sleep(0.3)  # as when the reader thread is not scheduled before the result arrives
        os.write(write_end, b"printed before the result\n" + OUTPUT_SYNC)
        os.close(write_end)

    capture = OutputCapture(os.fdopen(read_end, "rb"), limit=10_000)
    threading.Thread(target=slow_writer).start()
    mark = capture.mark()
    capture.wait_for_syncs(1, timeout=5)
    assert capture.since(mark) == "printed before the result\n"
