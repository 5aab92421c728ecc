#!/usr/bin/env python3
"""One-command set-up: `python3 dev.py quiz`, `python3 dev.py test` or `python3 dev.py lint`.

Creates `.venv/` beside this file (once), installs PyTorch's CPU build unless a
GPU driver is present or PyTorch is already there, installs quizprep, then runs
the quiz app, the test suite, or the linters (ruff, the import contracts of
the layers and mypy, all configured in pyproject.toml). Extra arguments go to
`quizprep` or `pytest`. Installing is skipped (and silent) once done, until
pyproject.toml changes.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("QUIZPREP_VENV", ROOT / ".venv"))
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# The CPU build the suite is tested with; override to pick another release.
TORCH_CPU_SPEC = os.environ.get("QUIZPREP_TORCH", "torch==2.13.*")
# The editable install follows source edits by itself; only a changed pyproject.toml
# (dependencies, entry points, packages) needs pip again, which took 7-19 s per launch.
STAMP = VENV / "quizprep-installed"
TEST_EXTRAS = "[dev,triton]"  # CI covers the Triton track too; lint uses the same install
LINTED = ("quizprep", "tests", "dev.py")


def venv_python() -> Path:
    scripts = "Scripts" if os.name == "nt" else "bin"
    return VENV / scripts / ("python.exe" if os.name == "nt" else "python")


def run(*cmd: str | Path) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True)


def has_module(python: Path, module: str) -> bool:
    probe = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([str(python), "-c", probe]).returncode == 0


def install_stamp(extras: str) -> str:
    """What an install covered: pyproject.toml's digest and the extras installed with it."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    return f"{digest} {extras or '-'}"


def installed(extras: str) -> bool:
    """Whether an install of these extras is up to date; any install of this pyproject covers the quiz."""
    try:
        done = STAMP.read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    wanted = install_stamp(extras)
    digest = wanted.split()[0]
    covered = any(line == wanted or (not extras and line.split()[0] == digest) for line in done if line)
    return covered and venv_python().exists()


def ensure_environment(extras: str) -> Path:
    python = venv_python()
    if installed(extras):
        return python
    if not python.exists():
        venv.create(VENV, with_pip=True)
    if not has_module(python, "torch"):
        if shutil.which("nvidia-smi"):
            run(python, "-m", "pip", "install", "torch")
        else:
            run(python, "-m", "pip", "install", TORCH_CPU_SPEC, "--extra-index-url", CPU_INDEX)
    run(python, "-m", "pip", "install", "-e", f"{ROOT}{extras}")
    STAMP.write_text(install_stamp(extras) + "\n", encoding="utf-8")
    return python


def lint(python: Path) -> int:
    """ruff, lint-imports, then mypy; all run, and any failing fails the lint."""
    scripts = python.parent
    steps = ([str(python), "-m", "ruff", "check", *LINTED],
             [str(scripts / ("lint-imports.exe" if os.name == "nt" else "lint-imports"))],
             [str(python), "-m", "mypy"])
    failed = 0
    for step in steps:
        print("+", " ".join(step), flush=True)
        failed = subprocess.run(step, cwd=ROOT).returncode or failed
    return failed


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"quiz", "test", "lint"}:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "quiz":
        python = ensure_environment("")
        return subprocess.run([str(python), "-m", "quizprep", *rest]).returncode
    python = ensure_environment(TEST_EXTRAS)
    if command == "lint":
        return lint(python)
    return subprocess.run([str(python), "-m", "pytest", *rest], cwd=ROOT).returncode


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except subprocess.CalledProcessError as failure:
        print(f"dev.py: set-up step failed (exit {failure.returncode}); see the output above", file=sys.stderr)
        sys.exit(failure.returncode or 1)
