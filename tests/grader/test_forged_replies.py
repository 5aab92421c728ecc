"""Replies the learner's process forges on its own pipe (issue 19): the grader reads each as a
failing verdict naming the protocol error, never a traceback, and caps what it keeps of a text
itself (the cap in the learner's process is the learner's to remove)."""
from __future__ import annotations

import json
import sys
import time

import pytest

from quizprep.grader.grade import GradeOptions, grade
from quizprep.grader.learner_side.protocol import ProtocolError, checked_module, checked_reply
from quizprep.grader.report import to_json

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




def empty(index: int) -> dict[str, object]:
    """A forged tensor entry with no bytes: the forger writes a header only."""
    return {"__tensor__": index, "dtype": "float64", "shape": [0], "nbytes": 0}


PAIR = {"__tuple__": [empty(0), empty(1)]}
WRONG_FIELDS = {
    "grads that are a number": ({"grads": 5}, "grads must be an object"),
    "grads whose values are a list": ({"grads": {"values": [1]}}, "grads' values must be an object"),
    "a gradient that is text": ({"grads": {"values": {"arg0": "x"}}}, "must be a tensor"),
    "a gradient error that is a number": ({"grads": {"error": 3}}, "grads' error must be text"),
    "inputs_after that is a list": ({"inputs_after": [1]}, "inputs_after must be an object"),
    "inputs_after's args that are a number": ({"inputs_after": {"args": 1}}, "args must be a list"),
    "inputs_after's kwargs that are text": ({"inputs_after": {"kwargs": "x"}}, "kwargs must be"),
    "a memory report that is text": ({"memory": "x"}, "memory must be an object"),
    "an allocation without a shape": ({"memory": {"peak_live_bytes": 1, "largest": [{"op": "mm"}]}}, "shape"),
    "mode_removed that is text": ({"memory": {"peak_live_bytes": 1, "mode_removed": "no"}}, "true or false"),
}


@pytest.mark.parametrize("forgery", sorted(WRONG_FIELDS))
def test_the_grader_refuses_a_reply_field_of_the_wrong_shape(forgery):
    fields, words = WRONG_FIELDS[forgery]
    with pytest.raises(ProtocolError, match=words):
        checked_reply({"ok": True, "value": 1, **fields})


@pytest.mark.parametrize("value", [5, {"handle": "1"}, {"handle": 1, "parameters": {"w": 2}},
                                   {"handle": 1, "children": {"a": 3}}])
def test_a_new_modules_value_of_the_wrong_shape_is_refused(value):
    with pytest.raises(ProtocolError):
        checked_module(value)


@pytest.mark.parametrize(("check_id", "fields"), [
    ("gradients", {"grads": {"values": {"arg0": "x"}}}), ("no-mutation", {"inputs_after": [1]}),
    ("no-mutation", {"inputs_after": {"args": [[1, 2]]}})], ids=["a text gradient", "inputs_after a list",
                                                               "an input that came back a list"])
def test_a_forged_field_fails_the_check_as_the_learners_doing(check_id, fields, tmp_path):
    """Never an "internal grader error": a field that does not fit is the learner's process's doing."""
    header = json.dumps({"ok": True, "value": PAIR, **fields})
    path = tmp_path / "attention.py"
    path.write_text(FORGER.format(where=IN_A_CALL.format(header=header)))
    check = grade(path, GradeOptions(only=(check_id,))).checks[-1]
    assert check.status == "fail" and "internal" not in check.message, check.message


def test_twenty_forbidden_calls_of_twenty_frames_keep_twenty_frames_in_the_report(tmp_path):
    """400 frames of 600-character lines per check made a 13.2 MB report; the report keeps the
    innermost 20 (bounds.bounded)."""
    frame = {"file": "/x.py", "line": 1, "function": "f", "code": "c" * 600}
    forbidden = [{"call": f"torch.softmax{n}", "frames": [frame] * 20} for n in range(20)]
    header = json.dumps({"ok": True, "value": PAIR, "forbidden": forbidden})
    path = tmp_path / "attention.py"
    path.write_text(FORGER.format(where=IN_A_CALL.format(header=header)))
    report = grade(path, GradeOptions(only=("values",)))
    check = report.checks[-1]
    assert check.status == "fail" and len(check.traceback) == 20, len(check.traceback)
    assert len(to_json(report)) < 100_000
