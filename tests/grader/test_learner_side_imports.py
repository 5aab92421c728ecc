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


def imported(source: str) -> list[str]:
    """Every module an import statement names, at any depth, a relative import as '.NAME'; and
    every module named to `importlib.import_module` or `__import__`."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.append("." * node.level + (node.module or ""))
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", ""))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)):
            names.append(str(node.args[0].value))
    return names


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_every_file_a_script_loads_by_path_is_in_the_learner_side_folder():
    loaded = set().union(*(loaded_by_path(script) for script in SCRIPTS))
    assert {"sandbox.py", "guards.py", "protocol.py", "ptxas_broker.py", "memaudit.py", "perf_runner.py",
            "perf_clocks.py"} <= loaded
    assert loaded <= set(LEARNER_SIDE)


@pytest.mark.parametrize("name", LEARNER_SIDE)
def test_a_learner_side_module_imports_nothing_of_quizprep(name):
    leaks = [module for module in imported((LEARNER_SIDE_DIR / name).read_text(encoding="utf-8"))
             if module.startswith(".") or within(module, "quizprep")]
    assert leaks == [], f"{name} is loaded in the learner's process by file path, yet imports {leaks}"


def test_every_way_of_importing_is_seen():
    source = ("import quizprep.budget\nfrom quizprep.grader.perf import plan\nfrom . import memaudit\n"
              "def late():\n    importlib.import_module('quizprep.grader')\n    __import__('quizprep')\n")
    assert imported(source) == ["quizprep.budget", "quizprep.grader.perf", ".", "quizprep.grader", "quizprep"]
