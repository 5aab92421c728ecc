"""`quizprep check` exit codes and output."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SAMPLE = Path(__file__).parent / "data" / "valid.yaml"


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "quizprep", "check", *args], capture_output=True, text=True)


def test_clean_bank_exits_zero() -> None:
    run = check(str(SAMPLE))
    assert run.returncode == 0
    assert "3 questions (1 choice, 1 free, 1 numeric) in 1 bank(s): no errors" in run.stdout


def test_errors_exit_one_and_name_file_line_id(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SAMPLE.read_text().replace("difficulty: 3", "difficulty: 7"))
    run = check(str(bad), "--json")
    assert run.returncode == 1
    errors = json.loads(run.stdout)["errors"]
    assert errors == [{"file": str(bad), "line": 43, "id": "sample-free",
                       "message": "difficulty must be 1, 2 or 3, got 7"}]


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    run = check(str(tmp_path / "nope.yaml"))
    assert run.returncode == 2 and "no such file" in run.stderr


def test_bad_option_is_a_usage_error() -> None:
    assert check("--frobnicate").returncode == 2
