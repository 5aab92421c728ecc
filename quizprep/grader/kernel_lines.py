"""The line of a learner's Triton file that a named kernel bug most likely lives on, found by what
the line does (the tl.* call, the comparison, the assignment a loop reads), never by variable names:
kernels name their tiles, pointers and running statistics every way. A bug that is a missing line
(no rescale, no mask) is pointed at the line that should carry it.

Read in the grader's process from the learner's file; a file that does not parse points nowhere."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from quizprep.grader.submission_file import source_text

SOURCE_LIMIT = 1 << 20  # bytes of a submission read for its lines


@dataclass(frozen=True)
class Statement:
    node: ast.stmt
    parts: tuple[ast.AST, ...]  # what is searched: the statement, or a compound statement's header
    text: str  # its source, whitespace collapsed
    kernel: bool  # inside an @triton.jit function
    loop: bool  # inside a for loop of one


@dataclass(frozen=True)
class Source:
    lines: list[str]
    statements: list[Statement]

    def at(self, found: Statement | ast.AST) -> tuple[int, str]:
        line = found.node.lineno if isinstance(found, Statement) else getattr(found, "lineno", 1)
        return line, self.lines[line - 1].strip()


def crossed_strides_line(path: Path) -> tuple[int, str] | None:
    """A statement of the learner's kernel or launch that reads one tensor through another's strides."""
    source = _read(path)
    found = _crossed_strides(source) if source else None
    return source.at(found) if source and found else None


def stale_mask(path: Path, line: int, code: str = "") -> bool:
    """Whether a load in a kernel's key loop has a mask that cannot move with the tile: it names
    nothing the loop changes (its variable, what it assigns), only what was computed before it. The
    load on `line` (or whose first line reads `code`) when one is, else any: interpreted, the
    innermost frame of the learner's file is often the launch, not the load."""
    source = _read(path)
    if source is None:
        return False
    loads = [s for s in _in_loop(source) if _calls(s, "load")]
    named = [s for s in loads if s.node.lineno <= line <= (s.node.end_lineno or s.node.lineno)
             or (code.strip() and source.lines[s.node.lineno - 1].strip() == code.strip())]
    masks = [keyword.value for s in (named or loads) for call in _calls(s, "load") for keyword in call.keywords
             if keyword.arg == "mask"]
    loops = [s for s in source.statements if s.kernel and isinstance(s.node, ast.For)]
    changing = {name.id for s in loops for part in s.parts[:1] for name in ast.walk(part) if isinstance(name, ast.Name)}
    changing |= {name for s in _in_loop(source) for name in _assigned(s)}
    before = {name for s in source.statements if s.kernel and not s.loop for name in _assigned(s)}
    for mask in masks:
        names = {node.id for node in ast.walk(mask) if isinstance(node, ast.Name)}
        if names and not names & changing and names & before:
            return True
    return False


def learner_line(path: Path, diagnosis_id: str) -> tuple[int, str] | None:
    """(line number, the line's text) in the learner's file for a named kernel bug, or None."""
    finder = FINDERS.get(diagnosis_id)
    source = _read(path) if finder else None
    found = finder(source) if finder and source else None
    return source.at(found) if source and found else None


def _read(path: Path) -> Source | None:
    text = source_text(path, SOURCE_LIMIT)  # '' where unreadable, or reached only through a link
    if not text:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    statements: list[Statement] = []
    for function in (node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)):
        kernel = any("jit" in ast.unparse(decorator) for decorator in function.decorator_list)
        statements.extend(_statements(text, function.body, kernel, loop=False))
    return Source(text.splitlines(), sorted(statements, key=lambda s: s.node.lineno))


def _statements(text: str, body: list[ast.stmt], kernel: bool, loop: bool) -> Iterator[Statement]:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        inner = [child for field in ("body", "orelse") for child in getattr(node, field, [])]
        words = ast.get_source_segment(text, node) or ""
        parts: tuple[ast.AST, ...] = (node,)
        if inner:  # a compound statement stands for its header
            words = words.splitlines()[0] if words else ""
            parts = tuple(getattr(node, field) for field in ("target", "iter", "test") if hasattr(node, field))
        yield Statement(node, parts, " ".join(words.split()), kernel, loop)
        yield from _statements(text, inner, kernel, loop or isinstance(node, ast.For))


def _calls(statement: Statement, name: str) -> list[ast.Call]:
    """Calls of tl.NAME (or tl.math.NAME, or a bare NAME) within the statement."""
    return [call for part in statement.parts for call in ast.walk(part) if isinstance(call, ast.Call)
            and ast.unparse(call.func).split(".")[-1] == name]


def _first(statements: Iterator[Statement]) -> Statement | None:
    return next(statements, None)


def _assigned(statement: Statement) -> set[str]:
    node = statement.node
    if not isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return set()
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {name.id for target in targets if target is not None for name in ast.walk(target)
            if isinstance(name, ast.Name)}


def _broadcast(node: ast.AST) -> bool:
    """An index vector spread over a tile's rows or columns: x[:, None] or x[None, :]."""
    return any(isinstance(sub, ast.Subscript) and "None" in ast.unparse(sub.slice) for sub in ast.walk(node))


def _tile_comparisons(statement: Statement, ops: tuple[type, ...]) -> bool:
    """A comparison of two index vectors spread over the tile (a causal mask), not of an index with n."""
    return any(isinstance(node, ast.Compare) and isinstance(node.ops[0], ops) and _broadcast(node.left)
               and _broadcast(node.comparators[0]) for part in statement.parts for node in ast.walk(part))


def _in_loop(source: Source) -> Iterator[Statement]:
    return (s for s in source.statements if s.kernel and s.loop)


def _accumulator(source: Source) -> str | None:
    """The name the loop's P·V product accumulates into: the target of its last tl.dot."""
    dots = [s for s in _in_loop(source) if _calls(s, "dot")]
    names = _assigned(dots[-1]) if dots else set()
    return next(iter(names), None)


def _scale_constant(source: Source) -> Statement | None:
    return _first(s for s in source.statements if any("scale" in name.lower() for name in _assigned(s))
                  and isinstance(getattr(s.node, "value", None), ast.Constant))


def _launches(source: Source) -> Iterator[ast.Call]:
    """kernel[grid](...) calls in the launcher."""
    return (call for s in source.statements if not s.kernel for part in s.parts for call in ast.walk(part)
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Subscript))


def _unit_scale_argument(source: Source) -> ast.AST | None:
    """A launch passing the literal 1 or 1.0 where the kernel takes its scale."""
    return next((arg for call in _launches(source) for arg in call.args
                 if isinstance(arg, ast.Constant) and arg.value in (1, 1.0) and not isinstance(arg.value, bool)), None)


def _no_scale(source: Source) -> Statement | ast.AST | None:
    return (_scale_constant(source) or _unit_scale_argument(source)
            or _first(s for s in _in_loop(source) if _calls(s, "dot")))


def _exp2_without_log2e(source: Source) -> Statement | None:
    scale = _first(s for s in source.statements if s.kernel and any("scale" in n.lower() for n in _assigned(s))
                   and not re.search(r"1\.44|log2e|LOG2E|log2\(", s.text, re.IGNORECASE))
    return scale or _first(s for s in source.statements if s.kernel and _calls(s, "exp2"))


def _exp_in_loop(source: Source) -> Statement | None:
    return _first(s for s in _in_loop(source) if _calls(s, "exp") or _calls(s, "exp2"))


def _natural_exp(source: Source) -> Statement | None:
    return _first(s for s in _in_loop(source) if _calls(s, "exp"))


def _accumulator_update(source: Source) -> Statement | None:
    acc = _accumulator(source)
    return _first(s for s in _in_loop(source) if acc in _assigned(s))


def _divide_in_loop(source: Source) -> Statement | None:
    acc = _accumulator(source)
    return _first(s for s in _in_loop(source) if acc in _assigned(s) and "/" in s.text)


def _sum_update(source: Source) -> Statement | None:
    sums = [s for s in _in_loop(source) if _calls(s, "sum")]
    names = set().union(*(_assigned(s) for s in sums)) if sums else set()
    readers = [s for s in _in_loop(source) if s in sums or any(re.search(rf"\b{re.escape(n)}\b", s.text)
                                                                  for n in names if n not in _assigned(s))]
    return readers[-1] if readers else None


def _max_start(source: Source) -> Statement | None:
    maxima = [call for s in _in_loop(source) for call in _calls(s, "maximum") if call.args]
    names = [call.args[0].id for call in maxima if isinstance(call.args[0], ast.Name)]
    return _first(s for s in source.statements if s.kernel and not s.loop and names and names[0] in _assigned(s))


def _loop_bound(source: Source) -> Statement | None:
    loop = _first(s for s in source.statements if s.kernel and isinstance(s.node, ast.For))
    if loop is None:
        return None
    ranges = [call for call in _calls(loop, "range") if len(call.args) >= 2]
    bound = ranges[0].args[1] if ranges else None
    name = bound.id if isinstance(bound, ast.Name) else None
    return _first(s for s in source.statements if s.kernel and name in _assigned(s)) or loop


def _strict_causal(source: Source) -> Statement | None:
    return _first(s for s in source.statements if s.kernel and _tile_comparisons(s, (ast.Gt, ast.Lt)))


def _diagonal_mask(source: Source) -> Statement | None:
    return (_first(s for s in source.statements if s.kernel and _tile_comparisons(s, (ast.GtE, ast.LtE)))
            or _first(s for s in source.statements if s.kernel and isinstance(s.node, ast.For)))


def _key_load(source: Source) -> Statement | None:
    return _first(s for s in _in_loop(source) if _calls(s, "load"))


def _load_with_inf(source: Source) -> Statement | None:
    return _first(s for s in source.statements if s.kernel and any(
        "inf" in ast.unparse(keyword.value) for call in _calls(s, "load") for keyword in call.keywords
        if keyword.arg == "other"))


def _stores(source: Source) -> list[Statement]:
    """The kernel's stores, out's (the accumulator's) first."""
    acc = _accumulator(source) or ""
    stores = [s for s in source.statements if s.kernel and _calls(s, "store")]
    return sorted(stores, key=lambda s: not (acc and re.search(rf"\b{re.escape(acc)}\b", s.text)))


def _unmasked_store(source: Source) -> Statement | None:
    return _first(s for s in _stores(source) if any(
        len(call.args) < 3 and not any(k.arg == "mask" for k in call.keywords) for call in _calls(s, "store")))


def _lse_store(source: Source) -> Statement | None:
    stores = _stores(source)
    return _first(s for s in stores if re.search(r"\blog2?\(", s.text)) or (stores[-1] if len(stores) > 1 else None)


def _lse_pointer(source: Source) -> Statement | None:
    store = _lse_store(source)
    pointer = _calls(store, "store")[0].args[0] if store else None
    if isinstance(pointer, ast.Name):
        return _first(s for s in source.statements if s.kernel and pointer.id in _assigned(s)) or store
    return store


STRIDE_OWNER = re.compile(r"^(?:stride_?|s)([qkvo])", re.IGNORECASE)


def _pointer_owner(name: str) -> str | None:
    """The tensor a pointer or offset belongs to by its name: q_ptrs, off_k, K_block_ptr, out_ptrs ->
    q, k, k, o; None for a name that says no one tensor (kv_offset, acc)."""
    parts = {part.lower() for part in name.split("_")}
    owners = {part for part in parts if part in ("q", "k", "v", "o")} | ({"o"} if "out" in parts else set())
    return owners.pop() if len(owners) == 1 else None


def _stride_owners(statement: Statement) -> set[str]:
    """Whose strides a statement reads: stride_kn, stride_v_seqlen, skb -> k, v, k."""
    names = [node.id for part in statement.parts for node in ast.walk(part) if isinstance(node, ast.Name)]
    return {match[1].lower() for name in names if ("stride" in name.lower() or len(name) == 3)
            and (match := STRIDE_OWNER.match(name))}


def _crossed_strides(source: Source) -> Statement | ast.AST | None:
    """A pointer or offset of one tensor (k_ptrs, K_block_ptr, v_offset) built from another's strides
    (stride_v…, stride_q…), or a launch that passes one tensor's strides for several."""
    for s in source.statements:
        owner = _pointer_owner(next(iter(_assigned(s)), "")) if s.kernel else None
        used = _stride_owners(s)
        if owner and used and owner not in used:
            return s
    for call in _launches(source):
        strides = [arg for arg in ast.walk(call) if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute)
                   and arg.func.attr == "stride"]
        owners = [ast.unparse(arg.func.value) for arg in strides]  # type: ignore[attr-defined]
        # four strides per tensor: a fifth of one tensor's, or *x.stride() twice, is in another's place
        repeated = [arg for i, (arg, owner) in enumerate(zip(strides, owners))
                    if owners[:i].count(owner) >= (1 if not arg.args else 4)]
        if repeated:
            return repeated[0]
    return None


def _half_dot(source: Source) -> Statement | None:
    return _first(s for s in source.statements if s.kernel and _calls(s, "dot") and "float16" in s.text)


def _grid(source: Source) -> Statement | None:
    return (_first(s for s in source.statements if not s.kernel and "grid" in _assigned(s))
            or _first(s for s in source.statements if not s.kernel and "[grid]" in s.text))


def _out_store(source: Source) -> Statement | None:
    """out's store when it has a mask (a mask that drops rows), else the grid that misses tiles."""
    stores = _stores(source)
    masked = stores and any(k.arg == "mask" for call in _calls(stores[0], "store") for k in call.keywords)
    return stores[0] if masked else _grid(source)


FINDERS: dict[str, Callable[[Source], Statement | ast.AST | None]] = {
    "triton-no-scale": _no_scale,
    "triton-exp2-no-log2e": _exp2_without_log2e,
    "triton-log2e-with-exp": _natural_exp,
    "no-max-shift": _exp_in_loop,
    "triton-no-rescale": _accumulator_update,
    "triton-divide-in-loop": _divide_in_loop,
    "triton-sum-not-rescaled": _sum_update,
    "triton-max-init-zero": _max_start,
    "triton-causal-loop-bound": _loop_bound,
    "triton-causal-strict": _strict_causal,
    "triton-diagonal-unmasked": _diagonal_mask,
    "triton-ragged-edge": _key_load,
    "triton-k-other-inf": _load_with_inf,
    "triton-unmasked-store": _unmasked_store,
    "triton-lse-batch": _lse_pointer,
    "triton-wrong-lse": _lse_store,
    "triton-half-dot": _half_dot,
    "triton-wrong-strides": _crossed_strides,
    "triton-grid-swapped": _grid,
    "triton-unwritten-output": _out_store,
}
