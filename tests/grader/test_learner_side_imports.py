"""The modules that run inside the learner's process import nothing of quizprep.

They are started as scripts or loaded by file path (`worker._load_sibling`), so import tools and
import-linter do not see them, and learner code must not reach the grader through them. Which
modules they are is read from the code: the scripts, and every file the scripts load by path."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import quizprep.grader

GRADER = Path(quizprep.grader.__file__).parent
# Run as scripts in the learner's process tree (the fork server forks the learner's workers).
SCRIPTS = ("worker.py", "forkserver.py", "perf/learner_worker.py")
# quizprep imports made by design, none reachable from learner code:
ALLOWED = {
    # the timing code, imported before the learner's module loads, then dropped from sys.modules
    "perf/learner_worker.py": ("quizprep.grader.perf",),
    # Allocation.describe formats sizes for the grader's report; the learner's process never calls it
    "memaudit.py": ("quizprep.budget",),
}


def loaded_by_path(script: str) -> set[str]:
    """The grader files a script loads with `_load_sibling("NAME.py")`."""
    found = set()
    for node in ast.walk(ast.parse((GRADER / script).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "_load_sibling":
            (argument,) = node.args
            assert isinstance(argument, ast.Constant), ast.unparse(node)
            found.add(argument.value)
    return found


LEARNER_SIDE = sorted(set(SCRIPTS).union(*(loaded_by_path(script) for script in SCRIPTS)))


def imported(path: Path) -> list[str]:
    """Every module an import statement names, at any depth; a relative import as '.NAME'."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.append("." * node.level + (node.module or ""))
    return names


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_learner_side_is_found():
    assert {"worker.py", "sandbox.py", "guards.py", "protocol.py", "ptxas_broker.py"} <= set(LEARNER_SIDE)


@pytest.mark.parametrize("name", LEARNER_SIDE)
def test_a_learner_side_module_imports_nothing_of_quizprep(name):
    allowed = ALLOWED.get(name, ())
    leaks = [module for module in imported(GRADER / name)
             if module.startswith(".") or (within(module, "quizprep") and not any(within(module, a) for a in allowed))]
    assert leaks == [], f"{name} is loaded in the learner's process by file path, yet imports {leaks}"
