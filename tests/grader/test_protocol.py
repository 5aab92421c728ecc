"""Decoding what comes back from the learner's process never unpickles and rejects malformed data."""
from __future__ import annotations

import json
import pickle

import pytest
import torch

from quizprep.grader import protocol


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
