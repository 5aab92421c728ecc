"""Screens and widgets get what they show through their constructors and tell the app what
changed with messages (issue 24): none reads the app's fields by name or sets them."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

TUI = Path(__file__).parents[2] / "quizprep" / "tui"
MODULES = sorted([*(TUI / "screens").glob("*.py"), *(TUI / "widgets").glob("*.py")])


def is_app(node: ast.AST) -> bool:
    """`self.app` or `app`."""
    return (isinstance(node, ast.Attribute) and node.attr == "app") or (isinstance(node, ast.Name) and node.id == "app")


def reaches_into_the_app(tree: ast.AST) -> list[str]:
    """Each getattr on the app and each assignment to one of its fields, in line order."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and node.args and is_app(node.args[0]):
            found.append((node.lineno, "getattr on the app"))
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        found += [(node.lineno, f"sets app.{target.attr}") for target in targets
                  if isinstance(target, ast.Attribute) and is_app(target.value)]
    return [f"line {line}: {what}" for line, what in sorted(found)]


@pytest.mark.parametrize("module", MODULES, ids=lambda path: path.stem)
def test_no_screen_or_widget_reaches_into_the_app(module: Path) -> None:
    assert reaches_into_the_app(ast.parse(module.read_text())) == []


def test_the_check_finds_what_it_looks_for() -> None:
    tree = ast.parse("getattr(self.app, 'length', None)\nself.app.interview = None\napp.length += 1\n")
    assert reaches_into_the_app(tree) == ["line 1: getattr on the app", "line 2: sets app.interview",
                                          "line 3: sets app.length"]
