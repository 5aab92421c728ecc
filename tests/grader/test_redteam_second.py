"""The second red team (2026-11-29, docs/security.md): each attack in redteam_2026_11_29/, run through
the `quizprep grade` command line as an instructor would, asserting that it is contained.

The three routes that broke on main e8a657c (a lone surrogate, a non-UTF-8 file name, files in
subfolders of the private directory) pass since their fixes.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ATTACKS = Path(__file__).parent / "redteam_2026_11_29"
HONEST_SOFTMAX = (
    "def stable_softmax(x, dim=-1):\n"
    "    shifted = x - x.amax(dim=dim, keepdim=True)\n"
    "    return shifted.exp() / shifted.exp().sum(dim=dim, keepdim=True)\n"
)
# What a terminal acts on: C0 controls but tab and newline, DEL, C1 (raw byte or UTF-8-encoded).
RAW_CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")
REPORT_BYTES = 1 << 20


def attack(name: str, folder: Path, as_name: str = "softmax.py") -> Path:
    """The attack file `name` copied into `folder` under the name it is graded as."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / as_name
    target.write_bytes((ATTACKS / f"{name}.py.txt").read_bytes())
    return target


def quizprep(*argv: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "quizprep", *map(str, argv)], capture_output=True, timeout=timeout)


def grade_json(path: Path, *extra: str) -> dict:
    run = quizprep("grade", path, "--exercise", "softmax", "--json", "--no-record", *extra)
    assert len(run.stdout) <= REPORT_BYTES, f"report of {len(run.stdout)} bytes"
    return json.loads(run.stdout)


def check(report: dict, check_id: str) -> dict:
    return next(item for item in report["checks"] if item["id"] == check_id)


def printed_json(text: str, marker: str) -> object:
    """What a probe printed after `marker`, decoded from the line it is on."""
    line = next(line for line in text.splitlines() if line.startswith(marker))
    return json.loads(line[len(marker):])


def assert_safe_text(output: bytes) -> None:
    assert not RAW_CONTROL.findall(output), f"raw control bytes: {sorted(set(RAW_CONTROL.findall(output)))}"
    output.decode("utf-8")  # raises on bytes a terminal or a JSON reader cannot take


def peak_rss_of_grade(*argv: str | Path) -> tuple[subprocess.CompletedProcess[bytes], int]:
    """The grade run in a fresh parent, so that the children's peak resident size is this grade's alone."""
    code = (
        "import resource, subprocess, sys\n"
        "run = subprocess.run([sys.executable, '-m', 'quizprep', *sys.argv[1:]], capture_output=True)\n"
        "sys.stdout.buffer.write(run.stdout)\n"
        "sys.stderr.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    )
    run = subprocess.run([sys.executable, "-c", code, *map(str, argv)], capture_output=True, timeout=300)
    return run, int(run.stderr.decode().strip().splitlines()[-1]) * 1024


# ---- the host --------------------------------------------------------------------------------

def test_host_syscalls_and_pid_1_are_refused(tmp_path):
    report = grade_json(attack("host_syscalls_softmax", tmp_path))
    assert printed_json(check(report, "load")["output"], "REACHED=") == {}


# ---- forged passes ---------------------------------------------------------------------------

def test_other_softmax_kernels_are_refused(tmp_path):
    report = grade_json(attack("kernel_routes_softmax", tmp_path))
    assert printed_json(check(report, "load")["output"], "REACHED=") == []


def test_a_files_own_exercise_comment_does_not_override_the_class_exercise(tmp_path):
    attack("exercise_override_comment_softmax", tmp_path / "class", "mallory.py")
    run = quizprep("grade", tmp_path / "class", "--exercise", "mha", "--json", "--no-record")
    (row,) = json.loads(run.stdout)["submissions"]
    assert not row["passed"]


def test_exercism_run_grades_the_slug_not_the_files_comment(tmp_path):
    attack("exercise_override_comment_softmax", tmp_path / "in", "mha.py")
    run = quizprep("exercism-run", "mha", tmp_path / "in", tmp_path / "out")
    assert run.returncode == 0
    assert json.loads((tmp_path / "out" / "results.json").read_text())["status"] != "pass"


# ---- classmates ------------------------------------------------------------------------------

def test_a_classmate_finds_no_other_process_or_folder(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.py").write_text(HONEST_SOFTMAX)
    attack("classmate_scan_softmax", folder, "mallory.py")
    run = quizprep("grade", folder, "--exercise", "softmax", "--jobs", "2", "--no-record",
                   "--format", "exercism", "--output-dir", tmp_path / "out")
    assert run.returncode == 0
    alice = (tmp_path / "out" / "alice" / "results.json").read_text()
    assert json.loads(alice)["status"] == "pass", alice[:1000]
    mallory = json.loads((tmp_path / "out" / "mallory" / "results.json").read_text())["message"]
    assert 'FOUND={"kill0": [], "proc": [], "dirs": {}, "fds": []}' in mallory, mallory


# ---- reports and terminals -------------------------------------------------------------------

def test_a_lone_surrogate_in_a_message_still_writes_results_json(tmp_path):
    path = attack("surrogate_message_softmax", tmp_path)
    run = quizprep("grade", path, "--no-record", "--format", "exercism", "--output-dir", tmp_path / "out")
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-300:]
    assert json.loads((tmp_path / "out" / "results.json").read_text())["status"] in ("fail", "error")


def test_a_lone_surrogate_in_a_message_still_prints_a_report(tmp_path):
    run = quizprep("grade", attack("surrogate_message_softmax", tmp_path), "--no-record")
    assert b"Traceback" not in run.stderr and b"checks pass" in run.stdout


@pytest.mark.parametrize("name", ["hostile_exception_str_softmax", "frame_filename_softmax",
                                  "raw_bytes_output_softmax"])
def test_learner_text_reaches_the_text_report_escaped_and_bounded(tmp_path, name):
    run = quizprep("grade", attack(name, tmp_path), "--no-record")
    assert b"checks pass" in run.stdout and len(run.stdout) <= REPORT_BYTES
    assert_safe_text(run.stdout)
    assert_safe_text(run.stderr)


def test_an_output_flood_is_bounded_in_the_grader_and_the_report(tmp_path):
    run, peak = peak_rss_of_grade("grade", attack("output_flood_softmax", tmp_path), "--json", "--no-record")
    assert len(run.stdout) <= REPORT_BYTES
    assert check(json.loads(run.stdout), "load")["status"] == "fail"
    assert peak < 1 << 30, f"a process of the grade reached {peak / 2**20:.0f} MiB"


def test_a_stride_0_reply_is_never_materialised_by_the_grader(tmp_path):
    run, peak = peak_rss_of_grade("grade", attack("stride0_reply_softmax", tmp_path), "--json", "--no-record")
    report = json.loads(run.stdout)
    assert not report["passed"] and check(report, "values")["status"] == "fail"
    assert peak < 1 << 30, f"a process of the grade reached {peak / 2**20:.0f} MiB"


def test_a_huge_source_file_is_bounded(tmp_path):
    path = tmp_path / "softmax.py"
    with path.open("w") as source:
        source.write(HONEST_SOFTMAX + "#" + "A" * (300 << 20) + "\n")
    run, peak = peak_rss_of_grade("grade", path, "--json", "--no-record")
    assert len(run.stdout) <= REPORT_BYTES and not json.loads(run.stdout)["passed"]
    assert peak < 1 << 30, f"a process of the grade reached {peak / 2**20:.0f} MiB"


def test_a_non_utf8_file_name_is_graded_and_reported(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.py").write_text(HONEST_SOFTMAX)
    Path(os.fsdecode(bytes(folder) + b"/bad\xff.py")).write_text(HONEST_SOFTMAX)
    run = quizprep("grade", folder, "--exercise", "softmax", "--jobs", "2", "--no-record", "--json", "--seed", "7")
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-300:]
    rows = json.loads(run.stdout.decode("utf-8"))["submissions"]
    assert [(row["file"], row["passed"]) for row in rows] == [("alice.py", True), ("bad\\xff.py", True)]
    run = quizprep("grade", folder, "--exercise", "softmax", "--jobs", "2", "--no-record", "--seed", "7",
                   "--csv", tmp_path / "class.csv")
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-300:]
    assert b"bad\\xff.py" in run.stdout
    assert len((tmp_path / "class.csv").read_text().splitlines()) == 3


def test_hostile_class_file_names_stay_escaped_neutral_and_apart(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    names = ['=HYPERLINK("http:__evil")+1.py', "esc\x1b[31mRED.py", "nl\nfake.py", "rtl\u202egnp.py"]
    for name in names:
        (folder / name).write_text(HONEST_SOFTMAX)
    subprocess.run(["mkfifo", folder / "fifo.py"], check=True)  # opened for reading, it would block forever
    (folder / "folder.py").mkdir()
    run = quizprep("grade", folder, "--exercise", "softmax", "--jobs", "2", "--no-record",
                   "--csv", tmp_path / "class.csv", "--format", "exercism", "--output-dir", tmp_path / "out")
    assert run.returncode == 0
    assert_safe_text(run.stdout)
    cells = [cell for line in (tmp_path / "class.csv").read_text().splitlines()[1:] for cell in line.split(",")]
    assert not any(cell.lstrip('"').startswith(("=", "+", "-", "@")) for cell in cells)
    assert len(list((tmp_path / "out").glob("*/results.json"))) == len(names)


def test_colliding_result_folders_each_hold_their_own_files_result(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    stems = ["alice smith", "alice_smith", "alice_smith_2", "alice_smith 2", "alice_smith-2"]
    for stem in stems:
        (folder / f"{stem}.py").write_text(f"def stable_softmax(x, dim=-1):\n    raise ValueError('I am {stem}')\n")
    run = quizprep("grade", folder, "--exercise", "softmax", "--jobs", "2", "--no-record",
                   "--format", "exercism", "--output-dir", tmp_path / "out")
    assert run.returncode == 0
    found = sorted(re.search(r"I am ([^'\\\"]*)", path.read_text()).group(1)
                   for path in (tmp_path / "out").glob("*/results.json"))
    assert found == sorted(stems)


# ---- limits ----------------------------------------------------------------------------------

def test_entries_in_the_private_directory_are_bounded_through_subfolders(tmp_path):
    assert not grade_json(attack("inode_flood_softmax", tmp_path))["passed"]


def test_calls_just_under_the_check_limit_stop_at_the_overall_deadline(tmp_path):
    start = time.monotonic()
    report = grade_json(attack("slow_calls_softmax", tmp_path))
    seconds = time.monotonic() - start
    assert "overall time limit" in check(report, "values")["message"]
    assert all(item["status"] != "pass" for item in report["checks"][2:])
    assert seconds < 2 * 45 + 30, f"the grade took {seconds:.0f} s against a 45 s overall deadline"
