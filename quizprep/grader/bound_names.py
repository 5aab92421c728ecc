"""What the names a learner's lines bind say of a mistake (value_lines.py): a value table is named for
what it holds (`sin`, `cos`), so a name that holds another table's values is the line that swapped
them, and a line that computes a mistake's telltale from tables is the mistake's own only where the
tables it reads are named for what they hold: `q * sin` holding the sines is a swap on that line, but
`q * s` may be computing from `s = angles.cos()` a line above, and is not quoted.

The recorder's binding entries (op BOUND, their `name` and a sample of the tensor) come from the
replay's trace of the learner's frames (learner_side/op_recorder.py)."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from torch import Tensor

from quizprep.grader.value_lines import BOUND, MIN_DISTINCT, ROUNDING_SLACK, UNIT_ROUNDOFF, among, sorted_values


UNNAMED = ""  # what a binding holds when its values are no name's table (the sines negated)


@dataclass(frozen=True)
class Naming:
    tables: dict[str, Tensor]  # what a name that contains the key holds: its values, sorted, in float64
    unnamed: Tensor  # values a table may hold that no name says (−sin): no name vouches for them, sorted
    scale: float  # the largest value the tables are computed from (an angle): their rounding grows with it

    def misnamed(self, entry: dict[str, Any]) -> bool:
        """A binding whose name says one table and that holds another's values alone."""
        held, said = self.held(entry), self.said(entry.get("name", ""))
        return entry["op"] == BOUND and said is not None and len(held) == 1 and not held & {said, UNNAMED}

    def made_on_its_line(self, entry: dict[str, Any], entries: list[dict[str, Any]]) -> bool:
        """An op of the binding's own line made its values: `sin, cos = angles.cos(), angles.sin()` swapped
        them there, where `cos, sin = tables(...)` only names what a line elsewhere returned."""
        return any(other["op"] != BOUND and other["line"] == entry["line"] and other.get("sample") == entry["sample"]
                   for other in entries)

    def vouched(self, op: dict[str, Any], entries: list[dict[str, Any]]) -> bool:
        """Every binding of a name `op`'s line reads that holds a table's values says which table, and
        holds no other's; False where the line does not parse alone."""
        read = names_read(op.get("code", ""))
        if read is None:
            return False
        bindings = [entry for entry in entries if entry["op"] == BOUND and entry.get("name") in read]
        return all(self.truthful(entry) for entry in bindings)

    def truthful(self, entry: dict[str, Any]) -> bool:
        """A binding sampled (a complex table is not) that holds no table, or the one its name says."""
        held = self.held(entry)
        sampled = bool(entry.get("sample") or entry.get("kept"))
        return (sampled and not held) or held == {self.said(entry["name"])}

    def said(self, name: str) -> str | None:
        """The one table a name says it holds (`sin_cached`); None for none or several (`sincos`)."""
        said = [key for key in self.tables if key in name.lower()]
        return said[0] if len(said) == 1 else None

    def held(self, entry: dict[str, Any]) -> set[str]:
        """The tables whose values a binding's sample lies wholly among, within its dtype's rounding of
        the angles (a 16-bit sine, or one at position 30,000, lies among the cosines too); none for a
        sample of too few values (a row at position 0)."""
        sample = sorted_values(entry.get("sample") or [])
        kind = str(entry.get("result", "")).rstrip("0123456789")
        if kind not in ("float", "half") or len(sample.unique()) < MIN_DISTINCT:
            return set()
        tolerance = ROUNDING_SLACK * UNIT_ROUNDOFF[kind] * self.scale
        held = {key for key, values in self.tables.items() if among(sample, values, tolerance)}
        return held | ({UNNAMED} if among(sample, self.unnamed, tolerance) else set())


def names_read(code: str) -> set[str] | None:
    """The names a line of code reads; None where it is no statement on its own (a continued call)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
