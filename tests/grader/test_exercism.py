"""`--format exercism`: Exercism's test-runner results.json (interface version 3)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from conftest import HERE, SOLUTIONS
from quizprep.cli import grade_command as command
from quizprep.grader import exercism
from quizprep.grader.grade import GradeReport
from quizprep.grader.spec import CheckResult


def report(*checks: CheckResult, file: str = "/class/alice.py") -> GradeReport:
    return GradeReport("softmax", "Stable softmax", file, list(checks), {})


LOADED = CheckResult("load", "file loads", "pass")


def test_a_passing_report_lists_every_test_that_ran_in_order():
    payload = exercism.results(report(LOADED, CheckResult("values", "values match", "pass"),
                                      CheckResult("cuda", "on CUDA", "skip", "needs CUDA")))
    assert payload == {"version": 3, "status": "pass", "tests": [
        {"name": "file loads", "status": "pass"}, {"name": "values match", "status": "pass"}]}


def test_a_failing_test_says_why_and_keeps_what_the_code_printed():
    failing = CheckResult("values", "values match", "fail", "max error 0.5", hint="Subtract the max.",
                          traceback=["/class/alice.py:3 in stable_softmax: e = x.exp()"], output="debug 1\n")
    payload = exercism.results(report(LOADED, failing, CheckResult("dtypes", "dtypes", "skip", "time ran out")))
    assert payload["status"] == "fail" and "message" not in payload
    test = payload["tests"][1]
    assert test["status"] == "fail" and test["output"] == "debug 1\n"
    assert test["message"].splitlines() == ["max error 0.5", "Hint: Subtract the max.", "Your code:",
                                            "  <solution-dir>/alice.py:3 in stable_softmax: e = x.exp()"]
    assert payload["tests"][2] == {"name": "dtypes", "status": "error", "message": "not run: time ran out"}


def test_output_is_capped_at_500_characters_with_the_notice():
    long = "".join(f"line {n}\n" for n in range(200))
    payload = exercism.results(report(LOADED, CheckResult("values", "values", "pass", output=long)))
    output = payload["tests"][1]["output"]
    assert len(output) == 500 and output.startswith(exercism.TRUNCATED) and output.endswith("line 199\n")
    assert exercism.capped_output("x" * 500) == "x" * 500


def test_a_file_that_does_not_load_is_an_error_with_a_message():
    load = CheckResult("load", "file loads", "fail", "your file has a syntax error: invalid syntax (line 2)",
                       traceback=["/class/alice.py:2 in <module>: def f(x y):"])
    payload = exercism.results(report(load, CheckResult("values", "values", "skip", "your file did not load")))
    assert payload == {"version": 3, "status": "error", "message": (
        "your file has a syntax error: invalid syntax (line 2)\nYour code:\n"
        "  <solution-dir>/alice.py:2 in <module>: def f(x y):")}


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="quizprep")
    command.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.handler(args)


def test_single_file_writes_results_json_and_exits_0_even_when_failing(tmp_path):
    buggy = HERE / "mutants" / "softmax_no_max_shift.py"
    assert run_cli("grade", str(buggy), "--format", "exercism", "--output-dir", str(tmp_path), "--seed", "0") == 0
    payload = json.loads((tmp_path / "results.json").read_text())
    assert payload["version"] == 3 and payload["status"] == "fail"
    failed = [t["name"] for t in payload["tests"] if t["status"] != "pass"]
    assert len(failed) == 2 and all(set(t) <= {"name", "status", "message", "output"} for t in payload["tests"])


def test_a_folder_writes_one_results_json_per_submission(tmp_path, capsys):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.py").write_text((SOLUTIONS / "softmax.py").read_text())
    (folder / "bob.py").write_text("def stable_softmax(x dim):\n")
    out = tmp_path / "out"
    assert run_cli("grade", str(folder), "--exercise", "softmax", "--format", "exercism",
                   "--output-dir", str(out)) == 0
    alice = json.loads((out / "alice" / "results.json").read_text())
    bob = json.loads((out / "bob" / "results.json").read_text())
    assert alice["status"] == "pass" and all(t["status"] == "pass" for t in alice["tests"])
    assert bob["status"] == "error" and "syntax" in bob["message"] and "<solution-dir>/bob.py" in bob["message"]
    assert sorted(p.name for p in out.iterdir()) == ["alice", "bob"]
    assert Path(out / "alice").is_dir()


def test_result_folders_never_leave_the_output_dir(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "linked").symlink_to(tmp_path)
    names = ["...py", "..py", ".py", "a\u2215b.py", "a\uff0fb.py", "linked.py", "alice.py", "alice.py"]
    folders = exercism.submission_folders(out, names)
    assert [f.name for f in folders] == ["submission", "submission-2", "submission-3", "a_b", "a_b-2",
                                         "linked-2", "alice", "alice-2"]
    assert all(f.parent == out for f in folders)


def test_a_file_whose_name_needed_no_change_keeps_its_folder(tmp_path):
    """Sorted, "alice smith.py" comes first: it used to take OUT/alice_smith/, so that folder said
    pass while the real alice_smith.py failed."""
    folders = exercism.submission_folders(tmp_path, ["alice smith.py", "alice_smith.py", "bob\x1b[2J.py"])
    assert [f.name for f in folders] == ["alice_smith-2", "alice_smith", "bob__2J"]


def test_a_results_file_that_is_a_link_is_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.json").symlink_to(victim)
    try:
        exercism.write({"status": "pass"}, tmp_path / "out")
    except OSError:
        pass
    assert victim.read_text() == "untouched"


def test_a_class_with_dot_named_files_writes_inside_the_output_dir(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("...py", "..py"):
        (folder / name).write_text("x = 1\n")
    out = tmp_path / "work" / "out"
    assert run_cli("grade", str(folder), "--exercise", "softmax", "--format", "exercism",
                   "--output-dir", str(out), "--fresh-workers") == 0
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["out"]
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("results.json")) == \
        ["submission-2/results.json", "submission/results.json"]
