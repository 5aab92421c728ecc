"""Where the kernel refuses namespaces (Docker's default seccomp profile, user namespaces turned
off), the grader falls back to the in-process layers and says so: in a grade's
environment.sandbox and under a class table. Run end to end through the command, with a
bubblewrap that fails as bubblewrap does there."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import SOLUTIONS
from quizprep.grader.jail import launch
from test_grade_command import run_cli

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the jail is Linux-only")

REFUSAL = "bwrap: No permissions to create a new namespace, likely because the kernel does not allow it"


@pytest.fixture
def namespaces_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    refusing = tmp_path / "bwrap"
    refusing.write_text(f"#!/bin/sh\necho '{REFUSAL}' >&2\nexit 1\n")
    refusing.chmod(0o755)
    monkeypatch.delenv(launch.OFF_SWITCH, raising=False)
    monkeypatch.setattr(launch, "bwrap_executable", lambda: str(refusing))
    launch._probe.cache_clear()
    yield
    launch._probe.cache_clear()


def test_a_grade_with_namespaces_refused_says_so_and_still_grades(namespaces_refused, tmp_path, capsys):
    path = tmp_path / "softmax.py"
    path.write_text((SOLUTIONS / "softmax.py").read_text())
    assert run_cli("grade", str(path), "--json", "--no-record", "--device", "cpu") == 0
    sandbox = json.loads(capsys.readouterr().out)["environment"]["sandbox"]
    assert sandbox["jail"]["namespaces"] == f"none: the kernel refused the namespaces: {REFUSAL}"
    assert "in-process layers" in sandbox["jail"]["fallback"]
    assert sandbox["dies_with_grader"], sandbox  # the layers below the namespaces were applied


def test_a_class_graded_with_namespaces_refused_says_so_under_its_table(namespaces_refused, tmp_path, capsys):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.py").write_text((SOLUTIONS / "softmax.py").read_text())
    assert run_cli("grade", str(folder), "--exercise", "softmax", "--jobs", "1", "--no-record") == 0
    out = " ".join(capsys.readouterr().out.split())  # the caption wraps at the console's width
    assert "1 of 1 submissions pass" in out
    assert "No jail (the kernel refused the namespaces: bwrap: No permissions" in out, out
