"""The modules that run inside the learner's process live in `quizprep/grader/learner_side/` and
import nothing of quizprep.

They are started as scripts or loaded by file path (`worker._load_sibling`), so import tools and
import-linter do not see them, and learner code must not reach the grader through them. The
folder holds them all: every file a script loads by path is in it, and each is checked here."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import quizprep.grader.learner_side

LEARNER_SIDE_DIR = Path(quizprep.grader.learner_side.__file__).parent
SCRIPTS = ("worker.py", "forkserver.py", "perf_worker.py")
# quizprep imports made by design, none reachable from learner code:
ALLOWED = {
    # the timing code the clean baseline process shares, imported before the learner's module
    # loads, then dropped from sys.modules
    "perf_worker.py": ("quizprep.grader.perf",),
}


def loaded_by_path(script: str) -> set[str]:
    """The files a script loads with `_load_sibling("NAME.py")`."""
    found = set()
    for node in ast.walk(ast.parse((LEARNER_SIDE_DIR / script).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "_load_sibling":
            (argument,) = node.args
            assert isinstance(argument, ast.Constant), ast.unparse(node)
            found.add(argument.value)
    return found


LEARNER_SIDE = sorted(path.name for path in LEARNER_SIDE_DIR.glob("*.py"))


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


def test_every_file_a_script_loads_by_path_is_in_the_learner_side_folder():
    loaded = set().union(*(loaded_by_path(script) for script in SCRIPTS))
    assert {"sandbox.py", "guards.py", "protocol.py", "ptxas_broker.py", "memaudit.py"} <= loaded
    assert loaded <= set(LEARNER_SIDE)


@pytest.mark.parametrize("name", LEARNER_SIDE)
def test_a_learner_side_module_imports_nothing_of_quizprep(name):
    allowed = ALLOWED.get(name, ())
    leaks = [module for module in imported(LEARNER_SIDE_DIR / name)
             if module.startswith(".") or (within(module, "quizprep") and not any(within(module, a) for a in allowed))]
    assert leaks == [], f"{name} is loaded in the learner's process by file path, yet imports {leaks}"
