"""`--format exercism`: Exercism's test-runner results.json (interface version 3)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from conftest import HERE, SOLUTIONS
from quizprep.cli import exercism_command
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
    subparsers = parser.add_subparsers()
    command.register(subparsers)
    exercism_command.register(subparsers)
    args = parser.parse_args(argv)
    return args.handler(args)


def test_single_file_writes_results_json_and_exits_0_even_when_failing(tmp_path):
    buggy = HERE / "mutants" / "softmax_no_max_shift.py"
    assert run_cli("grade", str(buggy), "--format", "exercism", "--output-dir", str(tmp_path), "--seed", "0") == 0
    payload = json.loads((tmp_path / "results.json").read_text())
    assert payload["version"] == 3 and payload["status"] == "fail"
    failed = [t["name"] for t in payload["tests"] if t["status"] != "pass"]
    assert len(failed) == 2
    assert all(set(t) <= {"name", "status", "message", "output", "test_code"} for t in payload["tests"])


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


def test_result_folders_differ_in_more_than_case(tmp_path):
    """Third red team: Alice.py and alice.py had Alice/ and alice/, one folder on a case-insensitive
    disk (macOS, Windows), where the second results.json replaced the first."""
    folders = exercism.submission_folders(tmp_path, ["Alice.py", "alice.py", "ALICE.py", "alice-2.py"])
    assert [f.name for f in folders] == ["Alice-3", "alice-4", "ALICE-5", "alice-2"]


def test_no_file_takes_a_folder_that_another_names_in_other_case(tmp_path):
    """Fifth red team: A_B.py took A_B/ and pushed the honest a_b.py to a_b-4/: a script reading
    OUT/a_b/results.json found nothing, or on a case-insensitive disk A_B.py's failing results."""
    folders = exercism.submission_folders(tmp_path, ["A_B.py", "a b.py", "a+b.py", "a_b.py"])
    assert not {f.name.casefold() for f in folders} & {"a_b"}
    assert len({f.name.casefold() for f in folders}) == 4


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


def test_each_test_shows_its_calls_as_code_and_a_task_where_it_reached_one_entry_point():
    step = CheckResult("decode", "one decoding step", "pass", test_code="decode_step(x=float32[1, 8])",
                       targets=["decode_step"])
    both = CheckResult("prompt", "prompt then steps", "pass", test_code="append_kv(...)\ndecode_step(...)",
                       targets=["append_kv", "decode_step"])
    tests = exercism.results(GradeReport("kv_cache", "KV cache", "/c/kv_cache.py", [LOADED, step, both], {}))["tests"]
    assert tests[1] == {"name": "one decoding step", "status": "pass", "test_code": "decode_step(x=float32[1, 8])",
                        "task_id": 2}
    assert "task_id" not in tests[2] and tests[2]["test_code"].count("\n") == 1
    one = CheckResult("values", "values", "pass", test_code="stable_softmax(x=float64[3, 4])",
                      targets=["stable_softmax"])
    assert "task_id" not in exercism.results(report(LOADED, one))["tests"][1]  # one entry point: no tasks


def test_the_call_log_names_arguments_after_the_stub_and_shows_tensors_by_shape():
    import torch

    from quizprep.grader.calls import CallLog

    log = CallLog()
    built = log.construct("MultiHeadAttention", (8, 2))
    q = torch.zeros(2, 5, 8)
    log.call("MultiHeadAttention", (q, q, q), {"mask": torch.ones(1, 1, 5, 5, dtype=torch.bool)}, module=built)
    log.call("MultiHeadAttention", (q, q, q), {"mask": torch.ones(1, 1, 5, 5, dtype=torch.bool)}, module=built)
    assert log.test_code() == ("MultiHeadAttention(d_model=8, n_heads=2)(query=float32[2, 5, 8], key=float32[2, 5, 8], "
                               "value=float32[2, 5, 8], mask=bool[1, 1, 5, 5])")
    assert list(log.targets) == ["MultiHeadAttention"]


STATUSES = {"pass", "fail", "error"}
TEST_FIELDS = {"name": str, "status": str, "test_code": str, "message": (str, type(None)),
               "output": (str, type(None)), "task_id": int}


def valid_v3(payload: dict) -> list[str]:
    """What breaks the interface's field rules for version 3 (an empty list when nothing)."""
    problems = [f"unknown top-level key {key}" for key in payload
                if key not in {"version", "status", "message", "tests"}]
    if payload.get("version") != 3 or payload.get("status") not in STATUSES:
        problems.append(f"version {payload.get('version')!r}, status {payload.get('status')!r}")
    if payload.get("status") == "error":
        if not isinstance(payload.get("message"), str) or not payload["message"]:
            problems.append("an error without a top-level message")
        return problems
    if payload.get("message") is not None:
        problems.append("a top-level message without an error")
    tests = payload.get("tests")
    if not isinstance(tests, list) or not tests:
        return problems + ["no tests for a pass or a fail"]
    for test in tests:
        problems += [f"{test.get('name')}: {key}" for key, value in test.items()
                     if key not in TEST_FIELDS or not isinstance(value, TEST_FIELDS[key])]
        problems += [f"{test.get('name')}: no {key}" for key in ("name", "status") if key not in test]
        if test.get("status") not in STATUSES or len(test.get("output") or "") > 500:
            problems.append(f"{test.get('name')}: status {test.get('status')!r} or output too long")
    overall = "pass" if all(t["status"] == "pass" for t in tests) else "fail"
    return problems + ([f"status {payload['status']} for tests that say {overall}"] if payload["status"] != overall
                       else [])


CRASHING = "import os\n\n\ndef stable_softmax(x, dim=-1):\n    print('about to crash')\n    os.abort()\n"


def test_exercism_run_writes_valid_results_for_a_passing_a_failing_and_a_crashing_file(tmp_path):
    solutions = {"pass": (SOLUTIONS / "softmax.py").read_text(),
                 "fail": (HERE / "mutants" / "softmax_no_max_shift.py").read_text(), "crash": CRASHING}
    results = {}
    for name, source in solutions.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "softmax.py").write_text(source)
        assert run_cli("exercism-run", "softmax", f"{tmp_path / name}/", f"{tmp_path / name}-out/",
                       "--timeout", "60") == 0  # a loaded test machine needs far more than Exercism's 20 s
        results[name] = json.loads((tmp_path / f"{name}-out" / "results.json").read_text())
        assert valid_v3(results[name]) == [], (name, results[name])
    assert [results[name]["status"] for name in solutions] == ["pass", "fail", "fail"]
    coded = [t["test_code"] for t in results["pass"]["tests"] if "test_code" in t]  # not load's nor device's
    assert len(coded) >= 6 and all(code.startswith("stable_softmax(x=") for code in coded), coded
    crashed = [t for t in results["crash"]["tests"] if t["status"] != "pass"]
    assert crashed and "about to crash" in crashed[0]["output"]
    failed = next(t for t in results["fail"]["tests"] if t["status"] == "fail")
    assert len(failed["message"].splitlines()) > 1  # more than the top line


def test_exercism_run_refuses_a_linked_solution_and_an_unknown_slug(tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text("the first line of another user's file\n")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "softmax.py").symlink_to(secret)
    for slug in ("softmax", "two-fer"):
        assert run_cli("exercism-run", slug, str(tmp_path / "in"), str(tmp_path / slug)) == 0
        payload = json.loads((tmp_path / slug / "results.json").read_text())
        assert payload["status"] == "error" and valid_v3(payload) == [] and "another user" not in payload["message"]


def test_the_class_table_names_a_results_folder_that_is_not_the_files_name():
    import io

    from rich.console import Console

    from quizprep.cli.cohort_command import table
    from quizprep.grader.cohort import CohortRow

    rows = [CohortRow(name, 1.0, True, [], [], 1.0) for name in ("alice smith.py", "alice_smith.py")]
    folders = exercism.submission_folders(Path("out"), [row.file for row in rows])
    console = Console(file=io.StringIO(), width=200)
    console.print(table(rows, "softmax", {row.file: folder.name for row, folder in zip(rows, folders)}))
    lines = console.file.getvalue().splitlines()
    assert any("alice smith.py → alice_smith-2/" in line for line in lines)
    assert any("alice_smith.py " in line and "→" not in line for line in lines)
