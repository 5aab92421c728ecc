"""`quizprep grade` and `quizprep init` through their argparse registration."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from conftest import SOLUTIONS
from quizprep.cli import grade_command as command


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="quizprep")
    command.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.handler(args)


def test_command_module_does_not_import_torch():
    code = "import sys, quizprep.cli.grade_command; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_json_report_for_a_passing_solution(capsys, tmp_path):
    source = tmp_path / "work.py"
    source.write_text("# quizprep: exercise=masking\n" + (SOLUTIONS / "masking.py").read_text())
    assert run_cli("grade", str(source), "--json") == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["exercise"] == "masking" and payload["passed"] is True and payload["score"] == 1.0
    assert {"id", "title", "status", "message", "diagnosis", "hint"} <= set(payload["checks"][0])
    assert payload["environment"]["torch"]


def test_failing_file_exits_1_with_rich_report(capsys, tmp_path):
    source = tmp_path / "softmax.py"
    source.write_text("import torch\n\ndef stable_softmax(x, dim=-1):\n    e = x.exp()\n"
                      "    return e / e.sum(dim=dim, keepdim=True)\n")
    assert run_cli("grade", str(source)) == 1
    out = capsys.readouterr().out
    assert "✗" in out and "without subtracting the maximum" in out and "softmax-max-shift" in out


@pytest.mark.parametrize("argv", [("grade", "/no/such/file.py"), ("grade", str(SOLUTIONS / "mha.py"),
                                                                  "--exercise", "nope")])
def test_usage_errors_exit_2(argv, capsys):
    assert run_cli(*argv) == 2
    assert "quizprep grade:" in capsys.readouterr().err


def test_a_link_to_a_file_outside_its_folder_is_not_graded(capsys, tmp_path):
    # a red team's submission linked to a fake /etc/shadow: the root grader printed its line in the report
    secret = tmp_path / "elsewhere" / "shadow"
    secret.parent.mkdir()
    secret.write_text("root:$6$salt$hash:19000:0:99999:7:::\n")
    (tmp_path / "class").mkdir()
    link = tmp_path / "class" / "attention.py"
    link.symlink_to(secret)
    assert run_cli("grade", str(link)) == 2
    captured = capsys.readouterr()
    assert "is a symbolic link to a file outside its folder" in captured.err and "$6$" not in captured.out


def test_init_copies_stubs_but_not_the_package_marker(tmp_path, capsys):
    assert run_cli("init", str(tmp_path / "ex")) == 0
    copied = {p.name for p in (tmp_path / "ex").iterdir()}
    assert {"attention.py", "masking.py", "mha.py", "gqa.py", "softmax.py"} <= copied
    assert "__init__.py" not in copied
    assert "NotImplementedError" in (tmp_path / "ex" / "attention.py").read_text()
    assert run_cli("init", str(tmp_path / "ex")) == 2  # never overwrites without --force


@pytest.mark.parametrize("target", ["file", "folder"])
def test_cuda_asked_for_on_a_machine_without_one_stops_before_any_worker(target, capsys, monkeypatch):
    from quizprep.grader import device

    monkeypatch.setattr(device, "cuda_available", lambda: False)
    path = SOLUTIONS / "mha.py" if target == "file" else SOLUTIONS
    assert run_cli("grade", str(path), "--exercise", "mha", "--device", "cuda") == 2
    assert capsys.readouterr().err.strip() == "quizprep grade: --device cuda, but PyTorch sees no CUDA device"
