"""What the learner's source says of a line where a replay's ops cannot: a statement that never ran,
and a name that indexes tensors. Read by the grader, never run; a file that does not parse says
nothing (no line is quoted from it).

A mistake that is an op that never ran (a mask under a condition that never held, a branch read as
False) issues nothing, so the replay records no op of the mistake's family; the learner's source
still shows the statement that would have issued one. Quoted: the one statement of the learner's
file that calls an op of the family (`p.masked_fill(...)`, `torch.where(...)`) and issued no op in
the replay, inside a function whose other statements did. A replay that reached the recorder's cap
(an op past it may have run unrecorded), or two such statements quote none: either could be the one
the learner meant to run.

A mistake that is an argument left unread (`rotary_dim`, the mask, `block_size`) has no line of its
own either: the parameter's line is quoted where the one function of the file that takes it, and
ran, never reads it, and any other function that ran and takes it only hands it on to one of the
file's functions.
"""
from __future__ import annotations

import ast
import math
import functools
from pathlib import Path
from typing import Any, Callable, Iterator

from quizprep.grader.learner_side.protocol import OPS_KEPT
from quizprep.grader.submission_file import source_text

SOURCE_LIMIT = 1 << 20  # bytes of a submission read for its statements
# calls through which any local may be read, unseen by the source
LOCALS_READERS = frozenset({"locals", "vars", "eval", "exec"})


def unrun_call(path: Path, ops: frozenset[str], recorded: list[dict[str, Any]]) -> dict[str, Any] | None:
    """{"line", "code"} of the one statement calling one of `ops` that issued no op of `recorded`, in a
    function that issued some, where it is all its block would have done: nothing else beside it
    failed to run (a whole untiled path that never ran is no mask left out of the tiled one that did).
    None otherwise."""
    if len(recorded) >= OPS_KEPT:
        return None
    ran = {op["line"] for op in recorded}
    text, functions = _functions(path)
    unrun = {statement.lineno for function in functions if _issued_ops(function, ran)
             for block in _blocks(function.body)
             for statement in _alone_unrun(block, ran) if _calls_one_of(statement, ops)}
    if len(unrun) != 1:
        return None
    line = unrun.pop()
    return {"line": line, "code": text.splitlines()[line - 1].strip()}


def unread_parameter(path: Path, names: tuple[str, ...], recorded: list[dict[str, Any]]) -> dict[str, Any] | None:
    """{"line", "code", "parameter", "function"} of the one parameter called one of `names` that a
    function of the file declares and never reads, where that function issued an op of `recorded`
    and no function of the file reads a parameter of that name but to hand it on, as is, to a
    function of the file. None otherwise, and where any local may be read unseen (`locals()`)."""
    if len(recorded) >= OPS_KEPT:
        return None
    ran = {op["line"] for op in recorded}
    text, functions = _functions(path)
    own = frozenset(function.name for function in functions)
    read, unread = set(), []
    for function in functions:
        taken = [parameter for parameter in _parameters(function) if parameter.arg in names]
        if taken and _calls_one_of(function, LOCALS_READERS):
            return None
        handed_on = {id(name) for name in _handed_on(function, own)}
        for parameter in taken:
            reads = [node for node in ast.walk(function) if isinstance(node, ast.Name)
                     and node.id == parameter.arg and isinstance(node.ctx, ast.Load)]
            if any(id(node) not in handed_on for node in reads):
                read.add(parameter.arg)
            elif not reads and _issued_ops(function, ran):
                unread.append((function.name, parameter))
    unread = [(function_name, parameter) for function_name, parameter in unread if parameter.arg not in read]
    if len(unread) != 1:
        return None
    function_name, parameter = unread[0]
    return {"line": parameter.lineno, "code": text.splitlines()[parameter.lineno - 1].strip(),
            "parameter": parameter.arg, "function": function_name}


def _issued_ops(function: ast.FunctionDef | ast.AsyncFunctionDef, ran: set[int]) -> bool:
    """Whether a statement of the function's own (not a nested function's) issued a recorded op."""
    return any(_lines(statement) & ran for statement in _simple_statements(function.body))


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    """Its named parameters (not *args or **kwargs, through which nothing is called by name)."""
    return [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]


def _handed_on(function: ast.FunctionDef | ast.AsyncFunctionDef, own: frozenset[str]) -> list[ast.expr]:
    """The names `function` passes, as they are, to a function of the file (`_tile(q, k, causal)`,
    `self._attend(x, mask=mask)`)."""
    calls = [node for node in ast.walk(function) if isinstance(node, ast.Call) and _called_name(node) in own]
    return [argument for call in calls for argument in (*call.args, *(k.value for k in call.keywords))
            if isinstance(argument, ast.Name)]


def _alone_unrun(block: list[ast.stmt], ran: set[int]) -> list[ast.stmt]:
    """The simple statement of `block` that issued no op, where it is the only one that does anything."""
    unrun = [statement for statement in block if not _inner_blocks(statement) and not _lines(statement) & ran
             and not isinstance(statement, (ast.Pass, ast.Break, ast.Continue))
             and not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))]
    return unrun if len(unrun) == 1 else []


def index_makers(path: Path) -> Callable[[int], bool]:
    """Whether a name the statement on a line binds is read as an index in its function
    (`q[:, :, rows]`): those are indices, which a position is made from, not positions themselves.
    True where the file cannot be read: nothing is known of the line. The file is parsed once, when
    first asked."""
    functions = functools.cache(lambda: _functions(path)[1])

    def indexes_tensors(line: int) -> bool:
        for function in functions():
            statements = [s for s in _simple_statements(function.body) if line in _lines(s)]
            bound = {name.id for s in statements if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                     for target in (s.targets if isinstance(s, ast.Assign) else [s.target])
                     for name in ast.walk(target) if isinstance(name, ast.Name)}
            if bound and any(isinstance(name, ast.Name) and name.id in bound for subscript in ast.walk(function)
                             if isinstance(subscript, ast.Subscript) for name in ast.walk(subscript.slice)):
                return True
            if statements:
                return False
        return True

    return indexes_tensors


def constant_beyond(path: Path, largest: float) -> tuple[str, int] | None:
    """The first finite numeric constant of the file (a leading minus included) whose magnitude is
    over `largest`, as written, with its line: -1e10 in a float16 mask is -inf there."""
    text = source_text(path, SOURCE_LIMIT)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.expr):
            continue
        value = node.operand if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) else node
        number = value.value if isinstance(value, ast.Constant) else None
        if isinstance(number, (int, float)) and not isinstance(number, bool) and largest < abs(number) < math.inf:
            return ast.get_source_segment(text, node) or repr(number), node.lineno
    return None


def _functions(path: Path) -> tuple[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    """The file's text and every function in it; none where it cannot be read or parsed."""
    text = source_text(path, SOURCE_LIMIT)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return text, []
    return text, [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _simple_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a function's own body that hold no others."""
    return (statement for block in _blocks(body) for statement in block if not _inner_blocks(statement))


def _blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """`body` and every block within it (an if's branches, a loop's body, a try's handlers), never
    into a nested function or class: those run, or not, apart."""
    body = [node for node in body if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    yield body
    for node in body:
        for block in _inner_blocks(node):
            yield from _blocks(block)


def _inner_blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    blocks = [getattr(node, field, []) for field in ("body", "orelse", "finalbody")]
    blocks += [handler.body for handler in getattr(node, "handlers", [])]
    return [block for block in blocks if block]


def _calls_one_of(statement: ast.stmt, ops: frozenset[str]) -> bool:
    """A call of `x.masked_fill_(...)` or `torch.where(...)` is one of masked_fill's or where's, as the
    recorder names the op."""
    return any(isinstance(call, ast.Call) and _called_name(call).strip("_") in ops for call in ast.walk(statement))


def _called_name(call: ast.Call) -> str:
    """`masked_fill` of `x.masked_fill(...)`, `where` of `where(...)`; "" for a call of anything else."""
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")


def _lines(statement: ast.stmt) -> set[int]:
    return set(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
