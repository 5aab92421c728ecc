"""A small, safe evaluator for the formulas in numeric questions.

Formulas are parsed with `ast` and only a whitelist of node types is accepted: arithmetic,
comparisons, `a if c else b`, numbers, names, and calls to a fixed set of maths functions.
Nothing is ever passed to `eval`, so no attribute, import or builtin can be reached.
"""
from __future__ import annotations

import ast
import math
import operator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Mapping, cast

Number = int | float

MAX_FORMULA_LENGTH = 1000
MAX_FORMULA_DEPTH = 100  # nesting levels (a 100-term sum); evaluating and rendering recurse per level
MAX_LITERAL = 1e100  # largest number a formula (or a parameter) may write out
# Integers may pass the float range a little on the way (results may not); the bound keeps every
# step cheap, so that the checker's work budget, counted in steps, bounds its time.
MAX_INT_BITS = 1100
MAX_RESULT_BITS = 1023  # an int result must convert to a finite float (the judge compares floats)

FUNCTIONS: dict[str, Callable[..., Number]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "log2": math.log2,
    "log": math.log,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "ceil": math.ceil,
    "floor": math.floor,
}

_BINARY: dict[type, Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE: dict[type, Callable[[Number, Number], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_SYMBOLS = {
    ast.Add: "+", ast.Sub: "−", ast.Mult: "×", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "mod", ast.Pow: "^", ast.Lt: "<", ast.LtE: "≤", ast.Gt: ">", ast.GtE: "≥",
    ast.Eq: "=", ast.NotEq: "≠",
}
_PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.FloorDiv: 2, ast.Mod: 2, ast.Pow: 4}


class FormulaError(ValueError):
    """A formula that does not parse, uses something outside the whitelist, or fails to evaluate."""


class LiteralTooLarge(FormulaError):
    """A number written out that is infinite or larger than MAX_LITERAL."""


@dataclass(frozen=True)
class Formula:
    source: str
    names: frozenset[str] = field(compare=False)
    size: int = field(default=1, compare=False)  # syntax-tree nodes: the cost of one evaluation

    @classmethod
    def parsed(cls, source: str, tree: ast.Expression, names: frozenset[str], size: int) -> Formula:
        """A formula whose `source` was just parsed into `tree` (and checked)."""
        formula = cls(source, names, size)
        formula.__dict__["tree"] = tree  # what `tree` would parse again
        return formula

    @cached_property
    def tree(self) -> ast.Expression:
        return ast.parse(self.source.strip(), mode="eval")

    def __getstate__(self) -> dict[str, object]:
        # Pickled without its syntax tree, which made up half of the bank cache's unpickling time
        # at the quiz app's start: a formula is parsed again only when it is first evaluated.
        return {name: value for name, value in self.__dict__.items() if name != "tree"}

    def evaluate(self, env: Mapping[str, Number]) -> Number:
        """The formula's value: always a finite float or an int that converts to one."""
        missing = self.names - env.keys()
        if missing:
            raise FormulaError(f"unknown name(s) {', '.join(sorted(missing))} in {self.source!r}")
        try:
            return _finite(_evaluate(self.tree.body, env))
        except (ArithmeticError, ValueError, TypeError) as error:
            if isinstance(error, FormulaError):
                raise
            raise FormulaError(f"{self.source!r} failed: {error}") from None

    def render(self, env: Mapping[str, Number] | None = None) -> str:
        """The formula in maths notation; with `env`, every name replaced by its value."""
        return _render(self.tree.body, env, 0)


def parse_formula(source: str) -> Formula:
    if not isinstance(source, str):
        raise FormulaError(f"a formula must be a string, got {type(source).__name__}")
    if len(source) > MAX_FORMULA_LENGTH:
        raise FormulaError(f"formula is longer than {MAX_FORMULA_LENGTH} characters")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as error:
        raise FormulaError(f"cannot parse {source!r}: {error.msg}") from None
    except (ValueError, RecursionError, MemoryError):
        raise FormulaError(f"cannot parse {source!r}") from None
    names, size = _checked_names(tree, source)
    return Formula.parsed(source, tree, names, size)


_ARITHMETIC = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.USub, ast.UAdd,
               ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def parse_arithmetic(source: str) -> Formula:
    """A formula of numbers and + − × / ^ only (no names, calls or comparisons): how a learner
    writes a number such as `2*2048*2048` or `3e9/2`."""
    formula = parse_formula(source)
    if not all(isinstance(node, _ARITHMETIC) for node in ast.walk(formula.tree)):
        raise FormulaError(f"only numbers and + - * / ^ may appear in {source!r}")
    return formula


def additive_terms(formula: Formula, definitions: Mapping[str, Formula]) -> tuple[Formula, ...]:
    """The terms whose sum is `formula`, following names defined in `definitions` that are sums
    themselves: `score_flops + pv_flops` gives both names. A formula that is no sum is one term."""
    return tuple(_subformula(node) for node in _terms(formula.tree.body, definitions))


def _terms(node: ast.expr, definitions: Mapping[str, Formula]) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _terms(node.left, definitions) + _terms(node.right, definitions)
    if isinstance(node, ast.Name) and node.id in definitions:
        expanded = _terms(definitions[node.id].tree.body, definitions)
        return expanded if len(expanded) > 1 else [node]
    return [node]


def _subformula(node: ast.expr) -> Formula:
    tree = ast.Expression(body=node)
    names, size = _checked_names(tree, ast.unparse(node))
    return Formula.parsed(ast.unparse(node), tree, names, size)


def has_even_factor(formula: Formula, definitions: Mapping[str, Formula]) -> bool:
    """Whether every term of `formula` is multiplied by an even integer constant, seen through
    the names in `definitions`: the visible ×2 of a multiply-add counted as 2 FLOPs."""
    return _even(formula.tree.body, definitions)


def _even(node: ast.AST, definitions: Mapping[str, Formula]) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and node.value != 0 and node.value % 2 == 0
    if isinstance(node, ast.Name):
        return node.id in definitions and _even(definitions[node.id].tree.body, definitions)
    if isinstance(node, ast.UnaryOp):
        return _even(node.operand, definitions)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _even(node.left, definitions) or _even(node.right, definitions)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _even(node.left, definitions) and _even(node.right, definitions)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _even(node.left, definitions) and not _even(node.right, definitions)
    return False


def _checked_names(tree: ast.Expression, source: str) -> tuple[frozenset[str], int]:
    """Checks every node against the whitelist and the depth limit; returns the variable names
    the formula reads and its node count, in one pass (a cold load parses thousands of formulas;
    `ast.walk` costs twice as much)."""
    names = set()
    size = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        size += 1
        if depth > MAX_FORMULA_DEPTH:
            raise FormulaError(f"formula is nested more than {MAX_FORMULA_DEPTH} levels deep")
        _check_node(node, source)
        if type(node) is ast.Name:
            names.add(node.id)
        elif type(node) is ast.Call:
            # its func is a checked name from FUNCTIONS, not a variable
            stack.extend((arg, depth + 1) for arg in node.args)
            continue
        for name in node._fields:
            value = getattr(node, name)
            if isinstance(value, ast.AST):
                stack.append((value, depth + 1))
            elif type(value) is list:
                stack.extend((item, depth + 1) for item in value)
    return frozenset(names), size


_ALLOWED = (
    ast.Expression, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp,
    ast.Constant, ast.Name, ast.Call, ast.Load, ast.USub, ast.UAdd, ast.Not, ast.And, ast.Or,
    *_BINARY, *_COMPARE,
)


def _check_node(node: ast.AST, source: str) -> None:
    if not isinstance(node, _ALLOWED):
        raise FormulaError(f"{type(node).__name__} is not allowed in a formula: {source!r}")
    if isinstance(node, ast.Constant):
        _check_constant(node.value, source)
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            allowed = ", ".join(sorted(FUNCTIONS))
            raise FormulaError(f"only these functions may be called: {allowed}: {source!r}")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise FormulaError(f"function calls take plain positional arguments: {source!r}")


def _check_constant(value: object, source: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormulaError(f"only numbers may appear as constants: {source!r}")
    if not abs(value) <= MAX_LITERAL:
        raise LiteralTooLarge(f"the number {_clipped(value)} is not finite or larger than "
                              f"{MAX_LITERAL:g}: {source!r}")


def _number(node: ast.Constant) -> Number:
    """The number a constant of a parsed formula writes: `_check_constant` let no other through."""
    return cast(Number, node.value)


def _evaluate(node: ast.AST, env: Mapping[str, Number]) -> Number:
    # The commonest nodes first, matched by exact type: a cold load evaluates thousands of draws.
    if type(node) is ast.Name:
        return env[node.id]
    if type(node) is ast.BinOp:
        left, right = _evaluate(node.left, env), _evaluate(node.right, env)
        if type(node.op) is ast.Pow:
            return _power(left, right)
        return _bounded(_BINARY[type(node.op)](left, right))
    if type(node) is ast.Constant:
        return _number(node)
    if isinstance(node, ast.UnaryOp):
        value = _evaluate(node.operand, env)
        if isinstance(node.op, ast.Not):
            return int(not value)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, env)
        for op, comparator in zip(node.ops, node.comparators):
            right = _evaluate(comparator, env)
            if not _COMPARE[type(op)](left, right):
                return 0
            left = right
        return 1
    if isinstance(node, ast.BoolOp):
        values = (_evaluate(v, env) for v in node.values)
        return int(all(values) if isinstance(node.op, ast.And) else any(values))
    if isinstance(node, ast.IfExp):
        branch = node.body if _evaluate(node.test, env) else node.orelse
        return _evaluate(branch, env)
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return _bounded(FUNCTIONS[node.func.id](*(_evaluate(a, env) for a in node.args)))


def _power(base: Number, exponent: Number) -> Number:
    if (isinstance(base, int) and isinstance(exponent, int) and exponent >= 0
            and base not in (0, 1, -1) and exponent * max(abs(base), 2).bit_length() > MAX_INT_BITS):
        raise FormulaError(f"a value on the way is too large (over {MAX_INT_BITS:,} bits)")
    result = base**exponent
    if isinstance(result, complex):
        raise FormulaError("a negative number raised to a fractional power")
    return _bounded(result)


def _finite(value: Number) -> Number:
    if type(value) is float:
        if not math.isfinite(value):
            raise FormulaError("result is not a finite number")
    elif isinstance(value, int) and value.bit_length() > MAX_RESULT_BITS:
        raise FormulaError("result is too large to be a number (beyond ±1.8e308)")
    return value


def _clipped(value: Number) -> str:
    """A literal short enough for an error message (a 4,000-digit one is named, not printed)."""
    return repr(value) if isinstance(value, float) or value.bit_length() < 200 else "(a huge integer)"


def _bounded(value: Number) -> Number:
    if type(value) is float:
        if not math.isfinite(value):
            raise FormulaError("result is not a finite number")
    elif isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise FormulaError(f"a value on the way is too large (over {MAX_INT_BITS:,} bits)")
    return value


def _render(node: ast.AST, env: Mapping[str, Number] | None, parent_precedence: int) -> str:
    if isinstance(node, ast.Constant):
        return format_number(_number(node))
    if isinstance(node, ast.Name):
        if env is None:
            return node.id
        shown = format_signed(env[node.id])
        # "3 + (−2)", not "3 + -2": a substituted negative value inside an operation is bracketed
        return f"({shown})" if env[node.id] < 0 and parent_precedence > 0 else shown
    if isinstance(node, ast.UnaryOp):
        symbol = "not " if isinstance(node.op, ast.Not) else ("−" if isinstance(node.op, ast.USub) else "+")
        return symbol + _render(node.operand, env, 3)
    if isinstance(node, ast.BinOp):
        precedence = _PRECEDENCE[type(node.op)]
        text = (
            f"{_render(node.left, env, precedence)} {_SYMBOLS[type(node.op)]} "
            f"{_render(node.right, env, precedence + 1)}"
        )
        return f"({text})" if precedence < parent_precedence else text
    if isinstance(node, ast.Compare):
        parts = [_render(node.left, env, 1)]
        for op, comparator in zip(node.ops, node.comparators):
            parts += [_SYMBOLS[type(op)], _render(comparator, env, 1)]
        return " ".join(parts)
    if isinstance(node, ast.BoolOp):
        joiner = " and " if isinstance(node.op, ast.And) else " or "
        return "(" + joiner.join(_render(v, env, 0) for v in node.values) + ")"
    if isinstance(node, ast.IfExp):
        return (
            f"({_render(node.body, env, 0)} if {_render(node.test, env, 0)} "
            f"else {_render(node.orelse, env, 0)})"
        )
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return f"{node.func.id}({', '.join(_render(a, env, 0) for a in node.args)})"


def format_number(value: Number) -> str:
    """Readable, exact where it matters: integers with separators, floats to 6 significant digits."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    if isinstance(value, int):
        return f"{value:,}"
    if value != 0 and (abs(value) >= 1e15 or abs(value) < 1e-4):
        return f"{value:.6g}"
    if abs(value) >= 1000:
        decimals = max(0, 5 - math.floor(math.log10(abs(value))))
        return f"{value:,.{decimals}f}"
    return f"{value:.6g}"


def format_signed(value: Number) -> str:
    """format_number with a typographic minus sign (−2, not -2), for worked solutions."""
    return "−" + format_number(-value) if value < 0 else format_number(value)
