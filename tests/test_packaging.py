"""Packaging: every sub-package ships, and the CLI lists every subcommand with a description."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "quizprep").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found <= listed, f"add to pyproject.toml [tool.setuptools] packages: {sorted(found - listed)}"


def test_help_lists_every_subcommand_with_a_description() -> None:
    run = subprocess.run([sys.executable, "-m", "quizprep", "--help"], capture_output=True, text=True)
    assert run.returncode == 0
    for command in ("quiz", "check", "grade", "init", "budget", "stats", "report"):
        line = next((text for text in run.stdout.splitlines() if text.strip().startswith(command + " ")), "")
        assert len(line.split()) > 2, f"{command!r} missing or undescribed in --help:\n{run.stdout}"


def test_version() -> None:
    run = subprocess.run([sys.executable, "-m", "quizprep", "--version"], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.startswith("quizprep ")


def test_cli_imports_no_torch() -> None:
    probe = "import sys, quizprep.cli as c; c.build_parser(); print('torch' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert run.stdout.strip() == "False", run.stderr


def test_opening_the_quiz_registers_only_its_own_command() -> None:
    probe = ("import sys, contextlib, io, quizprep.cli as c\n"
             "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()) as out:\n"
             "    c.main(['quiz', '--help'])\n"
             "print('--mode' in out.getvalue(), sorted(m for m in c.COMMAND_MODULES if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert run.stdout.strip() == "True ['quizprep.cli.quiz']", run.stdout + run.stderr


def test_built_wheel_ships_banks_stubs_and_stylesheet(tmp_path: Path) -> None:
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "-q", "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    [wheel] = tmp_path.glob("quizprep-*.whl")
    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    for stylesheet in ("quizprep.tcss", "screens.tcss"):  # Home's rules, the other screens'
        assert (unpacked / "quizprep" / "tui" / stylesheet).is_file()
    env = {**os.environ, "PYTHONPATH": str(unpacked)}
    where = subprocess.run([sys.executable, "-c", "import quizprep; print(quizprep.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env=env)
    assert where.stdout.startswith(str(unpacked)), "the test must import the wheel, not the checkout"
    check = subprocess.run([sys.executable, "-m", "quizprep", "check"], capture_output=True, text=True,
                           cwd=tmp_path, env=env)
    shipped = len(list((ROOT / "questions").glob("*.yaml")))
    assert check.returncode == 0 and f"in {shipped} bank(s): no errors" in check.stdout, check.stdout + check.stderr
    init = subprocess.run([sys.executable, "-m", "quizprep", "init", str(tmp_path / "stubs")],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert init.returncode == 0 and (tmp_path / "stubs" / "mha.py").is_file(), init.stderr
