"""The calls a check made into the learner's code, written as code: results.json's `test_code`
(Exercism's test-runner interface) shows them, e.g.
``MultiHeadAttention(d_model=8, n_heads=2)(query=float32[2, 5, 8], ...)``.

Positional arguments are named after the stub's parameters (read from its source, never run), so
the line reads as the stub's contract; a tensor is shown by its dtype and shape, not its values
(the inputs are secret).
"""
from __future__ import annotations

import ast
import functools
from importlib import resources
from typing import Any

STUBS = "quizprep.exercises"
CALLS_SHOWN = 4  # a check that calls more shows these and counts the rest
SELF = frozenset({"self", "cls"})


class CallLog:
    """What one check called, in order (repeats once), and which entry points it reached."""

    def __init__(self) -> None:
        self.lines: dict[str, None] = {}
        self.targets: dict[str, None] = {}

    def clear(self) -> None:
        self.lines.clear()
        self.targets.clear()

    def construct(self, target: str, args: tuple[Any, ...]) -> str:
        """The constructor call, as code; kept for the module's later calls."""
        self.targets[target] = None
        return f"{target}({_arguments(args, {}, parameters().get(target, ()))})"

    def call(self, target: str, args: tuple[Any, ...], kwargs: dict[str, Any], module: str = "",
             method: str = "forward") -> None:
        """A call of function `target`, or of `module` (its constructor call) when one is given."""
        names = parameters().get(f"{target}.{method}" if module else target, ())
        self.targets[target] = None
        self.lines[f"{module or target}({_arguments(args, kwargs, names)})"] = None

    def test_code(self) -> str:
        lines = list(self.lines)
        more = len(lines) - CALLS_SHOWN
        return "\n".join(lines[:CALLS_SHOWN] + ([f"# and {more} more calls"] if more > 0 else []))


def _arguments(args: tuple[Any, ...], kwargs: dict[str, Any], names: tuple[str, ...]) -> str:
    shown = [f"{names[i]}={_value(a)}" if i < len(names) else _value(a) for i, a in enumerate(args)]
    return ", ".join(shown + [f"{key}={_value(value)}" for key, value in kwargs.items()])


def _value(value: Any) -> str:
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        return f"{str(value.dtype).removeprefix('torch.')}[{', '.join(map(str, shape))}]"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_value(item) for item in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value) if value is None or isinstance(value, (bool, int, float, str)) else type(value).__name__


@functools.cache
def parameters() -> dict[str, tuple[str, ...]]:
    """Every stub's functions and classes by name: a function's parameters, a class's
    constructor's (under its name) and each method's (under Class.method), without self."""
    found: dict[str, tuple[str, ...]] = {}
    for stub in resources.files(STUBS).iterdir():
        if stub.name.endswith(".py"):
            for node in ast.parse(stub.read_text(encoding="utf-8")).body:
                _collect(node, found)
    return found


def _collect(node: ast.stmt, found: dict[str, tuple[str, ...]]) -> None:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        found.setdefault(node.name, _names(node))
    elif isinstance(node, ast.ClassDef):
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                key = node.name if item.name == "__init__" else f"{node.name}.{item.name}"
                found.setdefault(key, _names(item))


def _names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    return tuple(arg.arg for arg in function.args.posonlyargs + function.args.args if arg.arg not in SELF)
