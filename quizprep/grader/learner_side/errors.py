"""What a reply says about an error in the learner's code, in the worker: its type, a capped
message, the frames in the learner's own file and a kind the grader names causes by. Loaded by
the worker from its file; imports nothing of quizprep."""
from __future__ import annotations

import linecache
import os
import traceback
from typing import Any

MESSAGE_LIMIT = 600  # characters: the grader caps again, but a 15 MiB message never leaves here


def learner_frames(frames: Any, learner_path: str) -> list[dict[str, Any]]:
    """The frames of a stack or traceback that are in the learner's file."""
    return [
        {"file": frame.filename, "line": frame.lineno, "function": frame.name, "code": (frame.line or "").strip()}
        for frame in frames
        if _same_file(frame.filename, learner_path)
    ]


def describe(error: BaseException, learner_path: str, *, forbidden: type[BaseException]) -> dict[str, Any]:
    """The error as the reply carries it; `forbidden` is the guard's ForbiddenCall."""
    message = _short(_text_of(str, error))
    stack = traceback.extract_tb(error.__traceback__)
    description: dict[str, Any] = {
        "type": type(error).__name__,
        "message": message,
        "frames": learner_frames(stack, learner_path),
        "kind": _error_kind(error, message, forbidden),
        "raised_here": _raised_by_statement(error, message, stack, learner_path),
    }
    if isinstance(error, SyntaxError):
        description["syntax"] = {
            "file": error.filename,
            "line": error.lineno,
            "offset": error.offset,
            "text": (error.text or "").rstrip("\n"),
            "msg": error.msg,
        }
    if isinstance(error, SystemExit):
        description["message"] = _short(_text_of(repr, error.code))
    return description


# What torch's own errors about meta tensors say (Tensor.item(), a copy out, .numpy()).
TORCH_META_ERRORS = ("meta tensor", "meta device")


def _raised_by_statement(error: BaseException, message: str, stack: Any, learner_path: str) -> bool:
    """A raise or a failed assert of the learner's own, not an error torch raised on that line while
    the statement was evaluated (`assert torch.all(ok)` on a meta tensor raises in bool())."""
    if not stack or not _same_file(stack[-1].filename, learner_path):
        return False
    line = (stack[-1].line or "").lstrip()
    if line.startswith("assert"):
        return isinstance(error, AssertionError)
    return line.startswith("raise") and not any(words in message for words in TORCH_META_ERRORS)


def _text_of(render: Any, value: Any) -> str:
    """str() or repr() of something the learner made, which may itself raise (a __str__ that fails):
    the worker must still answer."""
    try:
        text = render(value)
        return text if isinstance(text, str) else f"<a {type(value).__name__}>"
    except BaseException:  # noqa: BLE001 - whatever it raises, the report names the type instead
        return f"<a {type(value).__name__} whose text could not be read>"


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == b
    except (OSError, ValueError):
        return False


def _short(text: str, limit: int = MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _error_kind(error: BaseException, message: str, forbidden: type[BaseException]) -> str:
    if isinstance(error, NotImplementedError) and "meta tensor" not in message:
        # (PyTorch raises NotImplementedError too, when code copies a meta tensor to a real device.)
        return "not_implemented"
    if isinstance(error, SyntaxError):
        return "syntax"
    if isinstance(error, SystemExit):
        return "exit"
    if isinstance(error, forbidden):
        return "forbidden"
    if isinstance(error, MemoryError) or "can't allocate memory" in message or "not enough memory" in message:
        return "memory"
    return "exception"


def remember_source(path: str, source: bytes) -> None:
    """Tracebacks and inspect show the learner's lines, read from the copy: the original path
    cannot be read once the process is confined (no mtime: linecache never re-reads it)."""
    lines = source.decode("utf-8", "replace").splitlines(keepends=True)
    linecache.cache[path] = (len(source), None, lines, path)
