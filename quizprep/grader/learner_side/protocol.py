"""Framing for the private channel between the grader and the learner's process.

A message is an 8-byte big-endian header length, a JSON header, then raw tensor bytes.
Tensors are described in the header as ``{"__tensor__": index, "dtype", "shape", ...}``
and their bytes follow in index order. Decoding never unpickles: dtypes come from a fixed
table, shapes and sizes are validated, and bytes become a tensor through ``torch.frombuffer``.

This module is imported by the worker as a file (it is never importable by learner code
under its package name), so it uses only the standard library and torch.
"""
from __future__ import annotations

import decimal
import fractions
import json
import os
import struct
from typing import Any, Callable, TypeGuard

HEADER = struct.Struct(">Q")
MAX_MESSAGE_BYTES = 1 << 30
MAX_HEADER_BYTES = 1 << 24
MAX_DEPTH = 64  # the deepest a header may nest: replies are a few levels deep
# Written to the worker's stdout before each message: once the grader's reader has seen it, all
# output printed before the message has been captured (stdout and the channel are separate pipes).
OUTPUT_SYNC = b"\x1e[quizprep output sync]\x1e"

DTYPES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")


class ProtocolError(Exception):
    """A message that is malformed, too large, or truncated."""


def _torch():
    import torch

    return torch


def encode(payload: Any, limit: int = MAX_MESSAGE_BYTES) -> bytes:
    """Serialise a JSON-able structure that may contain tensors, tuples and a few scalars. Tensors
    of more than `limit` bytes in all raise ValueError before any is copied: a stride-0 view of
    one element can claim gigabytes, which its reader would refuse unread."""
    buffers: list[bytes] = []
    header = _encode_value(payload, buffers, limit)
    header_bytes = json.dumps(header, allow_nan=True).encode()
    return HEADER.pack(len(header_bytes)) + header_bytes + b"".join(buffers)


def _encode_value(value: Any, buffers: list[bytes], limit: int) -> Any:
    torch = _torch() if _is_tensor(value) else None
    if torch is not None:
        return _encode_tensor(value, buffers, limit)
    if isinstance(value, tuple):
        return {"__tuple__": [_encode_value(v, buffers, limit) for v in value]}
    if isinstance(value, list):
        return [_encode_value(v, buffers, limit) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {k: _encode_value(v, buffers, limit) for k, v in value.items()}}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    number = _plain_number(value)
    return number if number is not None else {"__other__": describe_type(value)}


def _plain_number(value: Any) -> int | float | None:
    """A NumPy scalar (np.int64), Fraction or Decimal as the int or float it equals: an honest
    budget returned np.int64 and was told it returned no number (eighth red team)."""
    kind = type(value)
    if kind.__module__ == "numpy" and kind.__name__.startswith(("int", "uint", "float")) and hasattr(value, "item"):
        item = value.item()
        return item if isinstance(item, (int, float)) and not isinstance(item, bool) else None
    if isinstance(value, fractions.Fraction):
        return value.numerator if value.denominator == 1 else float(value)
    if isinstance(value, decimal.Decimal):
        return int(value) if value.is_finite() and value == value.to_integral_value() else float(value)
    return None


def _is_tensor(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and type(value).__name__ in {"Tensor", "Parameter"}


def _is_tensor_or_shape(value: Any) -> bool:
    """A tensor, or a meta tensor (the device check's), which crosses the channel as its shape only."""
    return _is_tensor(value) or (isinstance(value, Opaque) and value.description.startswith("meta tensor"))


def describe_type(value: Any) -> str:
    kind = type(value)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    shape = getattr(value, "shape", None)
    return f"{name} with shape {tuple(shape)}" if shape is not None else name


def _encode_tensor(tensor: Any, buffers: list[bytes], limit: int) -> dict[str, Any]:
    torch = _torch()
    dtype = str(tensor.dtype).removeprefix("torch.")
    if dtype not in DTYPES:
        return {"__other__": f"tensor of unsupported dtype {dtype}"}
    if tensor.is_nested or tensor.layout != torch.strided:
        return {"__other__": "nested tensor" if tensor.is_nested else f"tensor with layout {tensor.layout}"}
    if tensor.device.type == "meta":
        return {"__other__": "meta tensor (a shape without values)"}
    device = str(tensor.device)
    if sum(map(len, buffers)) + tensor.numel() * tensor.element_size() > limit:
        raise ValueError(f"a tensor of shape {tuple(tensor.shape)} takes {tensor.numel() * tensor.element_size():,} "
                         f"bytes, more than the {limit:,} a reply may hold")
    flat = tensor.detach().to("cpu").contiguous().reshape(-1)
    raw = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
    buffers.append(raw)
    return {
        "__tensor__": len(buffers) - 1,
        "dtype": dtype,
        "shape": list(tensor.shape),
        "device": device,
        "nbytes": len(raw),
    }


def decode(data: bytes) -> Any:
    """Inverse of :func:`encode`; raises ProtocolError on anything malformed."""
    if len(data) < HEADER.size:
        raise ProtocolError("message shorter than its header")
    (header_len,) = HEADER.unpack_from(data)
    if header_len > len(data) - HEADER.size:
        raise ProtocolError("header length exceeds message")
    header = _parse_header(data[HEADER.size : HEADER.size + header_len])
    body = memoryview(data)[HEADER.size + header_len :]
    offsets, _ = _buffer_layout(header)
    return _decoded(header, body, offsets)


def _parse_header(raw: bytes) -> Any:
    """The JSON header, nested at most MAX_DEPTH deep: the decoding walks recurse, and a
    RecursionError is no verdict."""
    try:
        header = json.loads(raw)
    except RecursionError:
        raise ProtocolError(f"header nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as error:
        raise ProtocolError(f"header is not JSON: {error}") from None
    level: list[Any] = [header]
    for _ in range(MAX_DEPTH):
        level = [child for node in level if isinstance(node, (dict, list))
                 for child in (node.values() if isinstance(node, dict) else node)]
        if not level:
            return header
    raise ProtocolError(f"header nested more than {MAX_DEPTH} levels deep")


def _decoded(header: Any, body: memoryview, offsets: dict[int, int]) -> Any:
    try:
        return _decode_value(header, body, offsets)
    except (TypeError, AttributeError, KeyError, ValueError) as error:
        raise ProtocolError(f"malformed message: {type(error).__name__}: {error}") from None


def _buffer_layout(header: Any) -> tuple[dict[int, int], int]:
    """Where each tensor's bytes start in the body, and the body's total size. Every tensor entry
    is checked here, before a byte of the body is read or allocated."""
    sizes: dict[int, int] = {}

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            if "__tensor__" in node:
                index, nbytes = node["__tensor__"], node.get("nbytes")
                if not (_is_count(index) and _is_count(nbytes)) or index in sizes:
                    raise ProtocolError(f"malformed tensor entry {str(node)[:80]}")
                sizes[index] = nbytes
                return
            for child in node.values():
                visit(child)
        elif isinstance(node, list):
            for child in node:
                visit(child)

    visit(header)
    if sorted(sizes) != list(range(len(sizes))):
        raise ProtocolError("tensor entries are not numbered 0, 1, 2, ...")
    offsets, position = {}, 0
    for index in sorted(sizes):
        offsets[index] = position
        position += sizes[index]
    return offsets, position


def _decode_value(node: Any, body: memoryview, offsets: dict[int, int]) -> Any:
    if isinstance(node, list):
        return [_decode_value(v, body, offsets) for v in node]
    if not isinstance(node, dict):
        return node
    if "__tensor__" in node:
        return _decode_tensor(node, body, offsets)
    if "__tuple__" in node:
        return tuple(_decode_value(v, body, offsets) for v in _array(node["__tuple__"], "a tuple's items"))
    if "__dict__" in node:
        return {str(k): _decode_value(v, body, offsets) for k, v in _object(node["__dict__"], "a dict's items").items()}
    if "__other__" in node:
        return Opaque(str(node["__other__"]))
    return {str(k): _decode_value(v, body, offsets) for k, v in node.items()}


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_MESSAGE_BYTES


class Opaque:
    """A value the learner returned that cannot cross the channel (a numpy array, an object...)."""

    def __init__(self, description: str) -> None:
        self.description = description

    def __repr__(self) -> str:
        return f"<{self.description}>"


def kind_of(value: Any) -> str:
    """What the learner returned, named by its own type (an Opaque by what it stood for)."""
    return value.description if isinstance(value, Opaque) else type(value).__name__


def _decode_tensor(node: dict[str, Any], body: memoryview, offsets: dict[int, int]) -> Any:
    torch = _torch()
    dtype_name = node.get("dtype")
    if dtype_name not in DTYPES:
        raise ProtocolError(f"unknown dtype {dtype_name!r}")
    dtype = getattr(torch, dtype_name)
    shape = node.get("shape")
    if not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape):
        raise ProtocolError(f"bad shape {shape!r}")
    numel = 1
    for size in shape:
        numel *= size
    itemsize = torch.empty((), dtype=dtype).element_size()
    nbytes = int(node.get("nbytes", -1))
    if nbytes != numel * itemsize or nbytes > MAX_MESSAGE_BYTES:
        raise ProtocolError("tensor byte count does not match its shape")
    start = offsets[int(node["__tensor__"])]
    chunk = body[start : start + nbytes]
    if len(chunk) != nbytes:
        raise ProtocolError("message truncated inside a tensor")
    if numel == 0:
        tensor = torch.empty(shape, dtype=dtype)
    else:
        tensor = torch.frombuffer(bytearray(chunk), dtype=torch.uint8).view(dtype).reshape(shape)
    tensor.quizprep_device = str(node.get("device", "cpu"))
    return tensor


def write_message(fd: int, payload: Any, limit: int = MAX_MESSAGE_BYTES) -> None:
    data = encode(payload, limit)
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_exact(fd: int, size: int, wait: Callable[[int], None] | None = None) -> bytes:
    """`size` bytes from `fd`; `wait(fd)`, if given, runs before each read (the grader's deadline)."""
    chunks, remaining = [], size
    while remaining:
        if wait is not None:
            wait(fd)
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise EOFError("channel closed")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_message(fd: int, reader: Callable[[int, int], bytes] = read_exact,
                 limit: int = MAX_MESSAGE_BYTES) -> Any:
    """Read one message of at most `limit` bytes; ``reader(fd, size)`` lets the grader add a deadline.
    Sizes are checked against the limit before anything is allocated."""
    head = reader(fd, HEADER.size)
    (header_len,) = HEADER.unpack(head)
    if header_len > min(limit, MAX_HEADER_BYTES):
        raise ProtocolError("header too large")
    header = _parse_header(reader(fd, header_len))
    offsets, total = _buffer_layout(header)
    if total > limit:
        raise ProtocolError(f"a reply of {total} bytes of tensors, more than the {limit} this check allows")
    body = reader(fd, total)
    return _decoded(header, memoryview(body), offsets)


# ---- the grader's reading of a reply's envelope ------------------------------------------------
TEXT_LIMIT = 600  # characters kept of any text in a reply: the learner's process may send far more
FRAMES_KEPT = 20
OPS_KEPT = 300  # the recorder's own cap (op_recorder.MAX_ENTRIES): more is a forged reply
SAMPLE_KEPT = 16  # values of a recorded op's result (op_recorder.SAMPLE_SIZE), and its dimensions
_ENVELOPE: dict[str, type | tuple[type, ...]] = {
    "ok": bool, "ready": bool, "prepared": bool, "event": str, "sandbox": dict, "seconds": (int, float), "status": int}
_FRAME = {"file": str, "line": int, "function": str, "code": str}


def checked_reply(message: Any) -> dict[str, Any]:
    """A worker's reply with its envelope's fields of the right types and its texts capped, in
    the grader (the learner's process could send anything on its pipe); ProtocolError otherwise."""
    reply = _object(message, "a reply")
    for key, kind in _ENVELOPE.items():
        if key in reply and (not isinstance(reply[key], kind) or (kind is not bool and isinstance(reply[key], bool))):
            raise ProtocolError(f"the reply's {key!r} is a {type(reply[key]).__name__}")
    if "names" in reply:
        reply["names"] = [_text(name, "a name") for name in _array(reply["names"], "names")]
    if "error" in reply:
        reply["error"] = _checked_error(reply["error"])
    if "frames" in reply:
        reply["frames"] = _frames(reply["frames"])
    for key in ("forbidden", "host_copies"):  # calls with where the learner's code made them
        if key in reply:
            reply[key] = [_checked_violation(item) for item in _array(reply[key], key)[:FRAMES_KEPT]]
    if "grads" in reply:
        reply["grads"] = _checked_grads(reply["grads"])
    if "inputs_after" in reply:
        inputs = _object(reply["inputs_after"], "inputs_after")
        reply["inputs_after"] = {"args": _array(inputs.get("args", []), "inputs_after's args"),
                                 "kwargs": _object(inputs.get("kwargs", {}), "inputs_after's kwargs")}
    if "memory" in reply:
        reply["memory"] = _checked_memory(reply["memory"])
    if "ops" in reply:
        reply["ops"] = [_checked_op(op) for op in _array(reply["ops"], "ops")[:OPS_KEPT]]
    return reply


def _checked_op(op: Any) -> dict[str, Any]:
    op = _object(op, "a recorded op")
    return {"op": _text(op.get("op"), "an op's name"), "operand": _text(op.get("operand", ""), "an op's operand"),
            "result": _text(op.get("result", ""), "an op's result"), "line": _count(op.get("line"), "an op's line"),
            "name": _text(op.get("name", ""), "a bound name"), "code": _text(op.get("code", ""), "an op's code"),
            "sample": _numbers(op, "sample"), "kept": _numbers(op, "kept"),
            "shape": [_count(size, "a size") for size in _array(op.get("shape", []), "an op's shape")[:SAMPLE_KEPT]]}


def _numbers(op: dict[str, Any], key: str) -> list[float]:
    """A recorded op's sample of values (`sample`), or of a mask's counts per row (`kept`), capped."""
    numbers = _array(op.get(key, []), f"an op's {key}")[:SAMPLE_KEPT]
    if not all(isinstance(value, float) for value in numbers):
        raise ProtocolError(f"an op's {key} must hold numbers")
    return numbers


def _checked_grads(grads: Any) -> dict[str, Any]:
    grads = _object(grads, "grads")
    values = _object(grads.get("values", {}), "grads' values")
    for name, value in values.items():
        if value is not None and not _is_tensor_or_shape(value):
            raise ProtocolError(f"the gradient {name[:80]!r} must be a tensor, not {type(value).__name__}")
    return {"values": values, "error": _text(grads.get("error", ""), "grads' error")}


def _checked_memory(memory: Any) -> dict[str, Any]:
    memory = _object(memory, "memory")
    largest = []
    for item in _array(memory.get("largest", []), "memory's largest")[:FRAMES_KEPT]:
        item = _object(item, "an allocation")
        shape = [_count(size, "a size") for size in _array(item.get("shape"), "an allocation's shape")]
        largest.append({"op": _text(item.get("op"), "op"), "shape": shape,
                        "nbytes": _count(item.get("nbytes"), "nbytes")})
    removed = memory.get("mode_removed", False)
    if not isinstance(removed, bool):
        raise ProtocolError(f"memory's mode_removed must be true or false, not {type(removed).__name__}")
    fold = _object(memory.get("widest_fold", {}), "memory's widest_fold")
    return {"peak_live_bytes": _count(memory.get("peak_live_bytes"), "peak_live_bytes"), "mode_removed": removed,
            "largest": largest, "widest_fold": {"op": _text(fold.get("op", ""), "widest_fold's op"),
                                                "values": _count(fold.get("values", 0), "widest_fold's values"),
                                                "line": _count(fold.get("line", 0), "widest_fold's line"),
                                                "code": _text(fold.get("code", ""), "widest_fold's code")}}


def checked_module(value: Any) -> tuple[int, dict[str, str], dict[str, Any]]:
    """A new module's handle, its children's kinds and its parameters (tensors), from a reply's value."""
    value = _object(value, "a new module")
    children = _object(value.get("children", {}), "a module's children")
    parameters = _object(value.get("parameters", {}), "a module's parameters")
    for name, parameter in parameters.items():
        if not _is_tensor_or_shape(parameter):
            raise ProtocolError(f"the parameter {name[:80]!r} must be a tensor, not {type(parameter).__name__}")
    return (_count(value.get("handle"), "a module's handle"),
            {name: _text(kind, "a child's kind") for name, kind in children.items()}, parameters)


def _checked_error(error: Any) -> dict[str, Any]:
    error = _object(error, "an error")
    checked: dict[str, Any] = {key: _text(error.get(key, ""), key) for key in ("kind", "type", "message")}
    checked["frames"] = _frames(error.get("frames", []))
    checked["raised_here"] = error.get("raised_here") is True
    if error.get("syntax") is not None:
        syntax = _object(error["syntax"], "a syntax error")
        checked["syntax"] = {key: _text(syntax.get(key) or "", key) for key in ("file", "text", "msg")}
        checked["syntax"]["line"] = _count(syntax.get("line") or 0, "line")
    return checked


def _checked_violation(item: Any) -> dict[str, Any]:
    item = _object(item, "a forbidden call")
    return {"call": _text(item.get("call", ""), "call"), "frames": _frames(item.get("frames", []))}


def _frames(frames: Any) -> list[dict[str, Any]]:
    checked = []
    for frame in _array(frames, "frames")[-FRAMES_KEPT:]:
        frame = _object(frame, "a frame")
        checked.append({key: _count(frame.get(key), key) if kind is int else _text(frame.get(key), key)
                        for key, kind in _FRAME.items()})
    return checked


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ProtocolError(f"{what} must be an object, not {type(value).__name__}")
    return dict(value)


def _array(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise ProtocolError(f"{what} must be a list, not {type(value).__name__}")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ProtocolError(f"{what} must be text, not {type(value).__name__}")
    return value if len(value) <= TEXT_LIMIT else value[: TEXT_LIMIT - 1] + "…"


def _count(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ProtocolError(f"{what} must be a whole number, not {type(value).__name__}")
    return value
