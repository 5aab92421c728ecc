"""Decoding what comes back from the learner's process never unpickles and rejects malformed data."""
from __future__ import annotations

import json
import os
import pickle
import re

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from quizprep.grader.learner_side import protocol


def test_round_trip_keeps_dtypes_shapes_and_structure():
    payload = {"value": (torch.arange(6, dtype=torch.bfloat16).reshape(2, 3), None, [torch.tensor(True)]),
               "n": 3}
    decoded = protocol.decode(protocol.encode(payload))
    tensor = decoded["value"][0]
    assert tensor.dtype == torch.bfloat16 and tensor.shape == (2, 3) and torch.equal(tensor, payload["value"][0])
    assert decoded["value"][1] is None and decoded["value"][2][0].item() is True and decoded["n"] == 3


def test_objects_cross_as_descriptions_only():
    decoded = protocol.decode(protocol.encode({"value": object()}))
    assert isinstance(decoded["value"], protocol.Opaque)


def frame(header: dict, body: bytes = b"") -> bytes:
    raw = json.dumps(header).encode()
    return protocol.HEADER.pack(len(raw)) + raw + body


@pytest.mark.parametrize("data", [
    pickle.dumps({"value": 1}),
    frame({"value": {"__tensor__": 0, "dtype": "object", "shape": [1], "nbytes": 8}}, b"\0" * 8),
    frame({"value": {"__tensor__": 0, "dtype": "float32", "shape": [4], "nbytes": 8}}, b"\0" * 8),
    frame({"value": {"__tensor__": 0, "dtype": "float32", "shape": [-1], "nbytes": 4}}, b"\0" * 4),
    frame({"value": {"__tensor__": 0, "dtype": "float32", "shape": [2], "nbytes": 8}}, b"\0" * 4),
])
def test_malformed_messages_are_rejected(data):
    with pytest.raises(protocol.ProtocolError):
        protocol.decode(data)


def _frame(header: object) -> bytes:
    data = json.dumps(header).encode()
    return protocol.HEADER.pack(len(data)) + data


def _read(frame: bytes, limit: int = protocol.MAX_MESSAGE_BYTES):
    read_fd, write_fd = os.pipe()
    os.write(write_fd, frame)
    os.close(write_fd)  # a reader that wanted the body would meet EOF, not a ProtocolError
    try:
        return protocol.read_message(read_fd, limit=limit)
    finally:
        os.close(read_fd)


@pytest.mark.parametrize("header", [
    {"__tensor__": "x", "dtype": "float32", "shape": [1], "nbytes": 4},
    {"__tensor__": 0, "dtype": "float32", "shape": [1], "nbytes": -4},
    {"__tensor__": True, "dtype": "float32", "shape": [1], "nbytes": 4},
    [{"__tensor__": 0, "nbytes": 4}, {"__tensor__": 0, "nbytes": 4}],
    {"__tensor__": 5, "dtype": "float32", "shape": [1], "nbytes": 4},
    {"__tuple__": 3},
    {"__dict__": [1, 2]},
])
def test_malformed_headers_are_protocol_errors(header):
    body = b"\0" * 4
    with pytest.raises(protocol.ProtocolError):
        _read(_frame(header) + body)


def test_an_oversized_reply_is_refused_before_its_body_is_read():
    half_gib = 512 << 20
    tensors = [{"__tensor__": i, "dtype": "uint8", "shape": [half_gib], "nbytes": half_gib} for i in range(2)]
    with pytest.raises(protocol.ProtocolError, match="more than"):
        _read(_frame({"__tuple__": tensors}), limit=64 << 20)


def test_tensors_with_no_plain_storage_cross_as_opaque_values():
    for value, words in ((torch.ones(2).to("meta"), "meta"), (torch.ones(2, 2).to_sparse(), "layout"),
                         (torch.nested.nested_tensor([torch.ones(2)]), "nested")):
        decoded = protocol.decode(protocol.encode({"value": value}))["value"]
        assert isinstance(decoded, protocol.Opaque) and words in decoded.description


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda children: st.lists(children, max_size=4)
                    | st.dictionaries(st.sampled_from(["ok", "error", "frames", "forbidden", "names", "ready", "event",
                                                       "value", "kind", "message", "file", "line", "call", "syntax",
                                                       "__tensor__", "__tuple__", "__dict__", "x"]), children,
                                      max_size=5),
                    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(header=JSON)
def test_any_reply_is_read_or_refused_as_a_protocol_error(header):
    try:
        protocol.checked_reply(_read(_frame(header) + b"\0" * 64))
    except (protocol.ProtocolError, EOFError):
        pass


@pytest.mark.parametrize("header, words", [
    pytest.param("[" * 100_000 + "]" * 100_000, "nested", id="100000-deep"),
    ([{"ok": True}], "must be an object"),
    ({"ok": "yes", "value": 1}, "'ok'"),
    ({"ok": False, "error": "boom"}, "an error must be an object"),
    ({"ok": False, "error": {"kind": "exception", "frames": [{"file": 1, "line": 2}]}}, "file must be text"),
    ({"ready": True, "names": "scaled_dot_product_attention"}, "names must be a list"),
    ({"ok": True, "value": 1, "forbidden": [{"call": 3}]}, "call must be text"),
    ({"ok": True, "value": 1, "host_copies": [{"call": []}]}, "call must be text"),
    # sixth red team: the grader's own AttributeError was the message
    ({"ok": True, "value": {"__dict__": 5}}, "a dict's items must be an object"),
    ({"ok": True, "value": {"__tuple__": 5}}, "a tuple's items must be a list"),
])
def test_malformed_replies_name_the_protocol_error(header, words):
    raw = header.encode() if isinstance(header, str) else json.dumps(header).encode()
    with pytest.raises(protocol.ProtocolError, match=re.escape(words)):
        protocol.checked_reply(protocol.decode(protocol.HEADER.pack(len(raw)) + raw))


def test_long_texts_in_a_reply_are_capped_by_the_grader():
    huge = "y" * (15 << 20)
    reply = protocol.checked_reply({"ok": False, "error": {"kind": "exception", "type": "E", "message": huge,
                                                           "frames": [{"file": huge, "line": 1, "function": "f",
                                                                       "code": huge}] * 1000}})
    assert len(reply["error"]["message"]) == protocol.TEXT_LIMIT
    assert len(reply["error"]["frames"]) == protocol.FRAMES_KEPT
    assert len(json.dumps(reply)) < 100_000


def test_tensors_beyond_the_limit_are_refused_before_any_is_copied():
    """A stride-0 view of one element claims 4 GB here: copied out, it would take that much of the
    learner's process (1.9 GB for test_redteam_second's 2e8 elements, before this), for a reply
    the grader refuses unread."""
    claimed = torch.zeros(1).expand(1_000_000_000)
    small = torch.ones(3)
    with pytest.raises(ValueError, match=r"4,000,000,000 bytes, more than the 1,024"):
        protocol.encode({"value": claimed}, limit=1024)
    with pytest.raises(ValueError, match="more than the 20 a reply"):
        protocol.encode({"a": small, "b": (small, small)}, limit=20)  # counted over the whole reply
    assert protocol.decode(protocol.encode({"a": small}, limit=12))["a"].tolist() == [1.0, 1.0, 1.0]
