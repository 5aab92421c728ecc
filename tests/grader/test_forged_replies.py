"""Replies the learner's process forges on its own pipe (issue 19): the grader reads each as a
failing verdict naming the protocol error, never a traceback, and caps what it keeps of a text
itself (the cap in the learner's process is the learner's to remove)."""
from __future__ import annotations

import json
import sys
import time

import pytest

from quizprep.grader.grade import GradeOptions, grade

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux-only")

FORGER = """
import gc, os, struct, time

def _send(header):
    worker = next(o for o in gc.get_objects() if type(o).__name__ == "Worker")
    raw = header.encode()
    os.write(worker.response_fd, struct.pack(">Q", len(raw)) + raw)
    time.sleep(30)  # the forged frame is read as the reply; this process is then ended

{where}
"""
AT_LOAD = "_send({header!r})\n\ndef scaled_dot_product_attention(q, k, v, mask=None):\n    pass"
IN_A_CALL = "def scaled_dot_product_attention(q, k, v, mask=None):\n    _send({header!r})"
FORGED = {
    "100,000-deep JSON at load": (AT_LOAD, "[" * 100_000 + "]" * 100_000, "nested more than"),
    "a list at top level at load": (AT_LOAD, "[1, 2]", "a reply must be an object"),
    "a ready reply with names of the wrong type": (AT_LOAD, json.dumps({"ready": True, "names": 5}), "names"),
    "an error that is a number in a call": (IN_A_CALL, json.dumps({"ok": False, "error": 7}), "an error must be"),
    "a success without a value in a call": (IN_A_CALL, json.dumps({"ok": True}), "without a value"),
}


@pytest.mark.parametrize("forgery", sorted(FORGED))
def test_a_forged_reply_fails_with_the_protocol_error(forgery, tmp_path):
    where, header, words = FORGED[forgery]
    path = tmp_path / "attention.py"
    path.write_text(FORGER.format(where=where.format(header=header)))
    started = time.monotonic()
    report = grade(path, GradeOptions(only=("values",)))
    assert time.monotonic() - started < 25  # the forger sleeps 30 s: its reply was read at once
    failed = [c for c in report.checks if c.status == "fail"]
    assert not report.passed and failed
    assert "could not be read back" in failed[0].message and words in failed[0].message, failed[0].message


def test_a_15_mib_error_message_is_capped_in_the_grader(tmp_path):
    header = json.dumps({"ok": False, "error": {"kind": "exception", "type": "RuntimeError",
                                                "message": "y" * (15 << 20), "frames": []}})
    path = tmp_path / "attention.py"
    path.write_text(FORGER.format(where=IN_A_CALL.format(header=header)))
    started = time.monotonic()
    report = grade(path, GradeOptions(only=("values",)))
    check = report.checks[-1]
    assert check.status == "fail" and "RuntimeError" in check.message
    assert len(json.dumps([c.message for c in report.checks])) < 5_000
    assert time.monotonic() - started < 25
