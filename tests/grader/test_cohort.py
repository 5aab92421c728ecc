"""Grading a folder of submissions: each verdict is the one the file gets alone, workers are
reused only while clean, and no worker outlives the run."""
from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import HERE, SOLUTIONS
from quizprep.cli import grade_command as command
from quizprep.grader.cohort import Cohort, submissions
from quizprep.grader.grade import GradeOptions, grade
from quizprep.grader.jail import launch
from quizprep.grader.worker_session import Limits

# A jailed class run starts a fresh jailed worker per file (a fork server's children would share its
# namespaces); the fork server runs where the jail is refused, or with QUIZPREP_JAIL=off.
JAILED = not launch.refused()
LIMITS = Limits(check_seconds=1.5, total_seconds=20)
OPTIONS = GradeOptions(exercise="softmax", seed=0, limits=LIMITS)
CORRECT = (SOLUTIONS / "softmax.py").read_text()
SIGNATURE = "def stable_softmax(x, dim=-1):\n"
HOSTILE = {
    "exit": "import os\n" + SIGNATURE + "    os._exit(3)\n",
    "segfault": "import ctypes\n" + SIGNATURE + "    return ctypes.string_at(0)\n",
    "loop": SIGNATURE + "    while True:\n        pass\n",
    "memory": "import torch\n" + SIGNATURE + "    return [torch.ones(1 << 27) for _ in range(64)]\n",
    "forbidden": "import torch\n" + SIGNATURE + "    return torch.softmax(x, dim)\n",
    # Correct itself, but once another file is loaded into its process it ends that process.
    "saboteur": CORRECT + (
        "\nimport os, sys, threading, time\n_me = sys.modules[__name__]\n\n\ndef _wait_for_the_next_file():\n"
        "    while sys.modules.get(__name__) is _me:\n        time.sleep(0.01)\n    os._exit(0)\n\n\n"
        "threading.Thread(target=_wait_for_the_next_file, daemon=True).start()\n"),
}
GOOD = {
    "correct": CORRECT,
    "logsumexp": (HERE / "variants" / "softmax_logsumexp.py").read_text(),
    "no-max-shift": (HERE / "mutants" / "softmax_no_max_shift.py").read_text(),
    "dim-ignored": (HERE / "mutants" / "softmax_dim_ignored.py").read_text(),
}


def verdict(row_or_report) -> tuple:
    if hasattr(row_or_report, "checks"):
        report = row_or_report
        failed = [c.id for c in report.checks if c.status in {"fail", "error"}]
        diagnoses = list(dict.fromkeys(c.diagnosis_id for c in report.checks if c.diagnosis_id))
        return report.passed, report.score, failed, diagnoses
    return row_or_report.passed, row_or_report.score, row_or_report.failed, row_or_report.diagnoses


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def write_class(folder: Path, names: list[tuple[str, str]]) -> list[Path]:
    folder.mkdir()
    for number, (name, source) in enumerate(names):
        (folder / f"{number:02d}_{name}.py").write_text(source)
    return submissions(folder)


def run_cohort(folder: Path, *, jobs: int, fresh: bool = False, options: GradeOptions = OPTIONS) -> tuple:
    cohort = Cohort(submissions(folder), options, jobs=jobs, root=folder, seed=0, fresh=fresh)
    return cohort, cohort.run()


def test_hostile_files_never_change_another_files_verdict(tmp_path):
    good = list(GOOD.items())
    interleaved = [item for pair in zip(HOSTILE.items(), good + good[:2]) for item in pair]
    files = write_class(tmp_path / "class", interleaved)
    options = dataclasses.replace(OPTIONS, only=("values", "large-fp32"))  # two checks: hostile files are slow
    cohort, rows = run_cohort(tmp_path / "class", jobs=2, options=options)
    with ThreadPoolExecutor(2) as pool:  # each alone, in a fresh worker of its own
        alone = dict(zip([p.name for p in files], pool.map(lambda p: verdict(grade(p, options)), files)))

    assert [row.file for row in rows] == [path.name for path in files]
    assert {row.file: verdict(row) for row in rows} == alone
    assert [row.file for row in rows if row.passed] == [
        "01_correct.py", "03_logsumexp.py", "09_correct.py", "10_saboteur.py", "11_logsumexp.py"]
    for pgid in cohort.process_groups:
        assert not group_alive(pgid), f"worker group {pgid} outlived the cohort"


class DescriptorLog:
    """Which pipes a job's thread opened, and which of them the main thread closed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opened_by_jobs: set[int] = set()
        self.closed_by_main: list[int] = []
        self._pipe, self._close = os.pipe, os.close
        monkeypatch.setattr(os, "pipe", self.pipe)
        monkeypatch.setattr(os, "close", self.close)

    def pipe(self) -> tuple[int, int]:
        ends = self._pipe()
        if threading.current_thread() is not threading.main_thread():
            self.opened_by_jobs.update(ends)
        return ends

    def close(self, fd: int) -> None:
        if threading.current_thread() is threading.main_thread() and fd in self.opened_by_jobs:
            self.closed_by_main.append(fd)
        self._close(fd)


def interrupt_main_thread(_signal: int, _frame: object) -> None:
    raise KeyboardInterrupt


def test_ctrl_c_kills_a_cohorts_workers_and_leaves_each_jobs_pipes_to_that_job(tmp_path, monkeypatch):
    """Ctrl+C reaches the main thread while a job's thread waits on its worker. The main thread
    once closed that job's pipes itself; a file opened meanwhile could take their numbers, and
    the job's thread then wrote to that file or closed it."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are handled only by the main thread")
    write_class(tmp_path / "class", [("loop", SIGNATURE + "    print('looping', flush=True)\n    while True:\n"
                                                          "        pass\n")])
    limits = Limits(check_seconds=60, total_seconds=120)  # the job is still waiting when Ctrl+C comes
    cohort = Cohort(submissions(tmp_path / "class"), dataclasses.replace(OPTIONS, limits=limits), jobs=1,
                    root=tmp_path / "class", seed=0)
    log = DescriptorLog(monkeypatch)

    def press_ctrl_c_once_the_learner_loops() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
                session.output is not None and "looping" in session.output.since(0) for session in cohort.sessions):
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGUSR1)

    previous = signal.signal(signal.SIGUSR1, interrupt_main_thread)
    try:
        threading.Thread(target=press_ctrl_c_once_the_learner_loops, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            cohort.run()
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert log.opened_by_jobs and log.closed_by_main == []
    deadline = time.monotonic() + 20
    while (cohort.sessions or cohort.servers) and time.monotonic() < deadline:  # closed by the job's thread
        time.sleep(0.05)
    assert cohort.sessions == [] and cohort.servers == [] and cohort.process_groups
    for pgid in cohort.process_groups:
        assert not group_alive(pgid), f"worker group {pgid} outlived the stopped cohort"


def test_a_job_imports_torch_once_and_forks_a_worker_per_file(tmp_path, monkeypatch):
    monkeypatch.setenv(launch.OFF_SWITCH, "off")
    write_class(tmp_path / "class", list(GOOD.items()) + [("again", CORRECT)])
    cohort, rows = run_cohort(tmp_path / "class", jobs=1)
    assert [verdict(row)[0] for row in rows] == [True, True, False, False, True]
    assert (cohort.server_starts, cohort.worker_starts) == (1, 5)


PATCHES_TORCH = {
    "patches torch": CORRECT + "\ntorch.Tensor.exp = lambda self: torch.zeros_like(self)\n",
    "changes the default dtype": CORRECT + "\ntorch.set_default_dtype(torch.float16)\n",
    "leaves a thread that breaks torch later": CORRECT + (
        "\nimport threading, time\n\n\ndef _later():\n    time.sleep(0.5)\n"
        "    torch.Tensor.sum = lambda self, *a, **k: self.new_zeros(())\n\n\n"
        "threading.Thread(target=_later, daemon=True).start()\n"),
}


@pytest.mark.parametrize("fresh", [False, True], ids=["forked", "fresh-interpreter"])
@pytest.mark.parametrize("change", sorted(PATCHES_TORCH))
def test_a_file_that_changes_torch_cannot_change_the_next_verdict(tmp_path, change, fresh):
    write_class(tmp_path / "class", [("changes", PATCHES_TORCH[change]), ("correct", CORRECT)])
    cohort, rows = run_cohort(tmp_path / "class", jobs=1, fresh=fresh)
    assert rows[1].passed, rows[1].failed
    assert cohort.server_starts == (0 if fresh or JAILED else 1)


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="quizprep")
    command.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.handler(args)


@pytest.fixture(scope="module")
def small_class(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cli") / "class"
    write_class(folder, [("correct", CORRECT), ("no-max-shift", GOOD["no-max-shift"])])
    return folder


def test_json_rows_and_no_progress_bar(small_class, capsys):
    assert run_cli("grade", str(small_class), "--exercise", "softmax", "--jobs", "2", "--json", "--seed", "0") == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert captured.err == ""
    rows = {row["file"]: row for row in payload["submissions"]}
    assert rows["00_correct.py"]["passed"] is True and rows["00_correct.py"]["failed"] == []
    assert rows["01_no-max-shift.py"]["diagnoses"] == ["no-max-shift"]
    assert rows["01_no-max-shift.py"]["failed"] == ["large-fp32", "large-fp16"]
    assert all(row["seed"] == 0 and row["seconds"] > 0 for row in payload["submissions"])
    assert payload["proctored"] is False and "ctypes" in payload["not_proctored"]


def test_csv_rows_and_table(small_class, tmp_path, capsys):
    target = tmp_path / "grades.csv"
    assert run_cli("grade", str(small_class), "--exercise", "softmax", "--csv", str(target)) == 0
    rows = list(csv.DictReader(target.open()))
    assert [(r["file"], r["passed"], r["failed"], r["diagnoses"]) for r in rows] == [
        ("00_correct.py", "True", "", ""), ("01_no-max-shift.py", "False", "large-fp32 large-fp16", "no-max-shift")]
    assert rows[0]["seed"] != rows[1]["seed"]  # without --seed, each file gets its own secret inputs
    printed = capsys.readouterr().out
    assert "softmax: 1 of 2 submissions pass" in printed and "Not proctored" in printed


def test_csv_cells_a_spreadsheet_would_run_are_quoted(tmp_path):
    # the red team's file "=HYPERLINK(...)+cmd.py" became a formula in the instructor's grade book
    from quizprep.cli.cohort_command import write_csv
    from quizprep.grader.cohort import CohortRow

    target = tmp_path / "grades.csv"
    names = ['=HYPERLINK("http://x","y")+cmd.py', "+1.py", "-2.py", "@sum.py", "plain.py"]
    write_csv([CohortRow(name, 0.0, False, [], [], 0.0) for name in names], target)
    cells = [row["file"] for row in csv.DictReader(target.open())]
    assert cells == [f"'{name}" for name in names[:4]] + ["plain.py"]


@pytest.mark.parametrize("argv, named", [
    (("--json",), "--exercise"),
    (("--exercise", "softmax", "--json", "--csv", "x.csv"), "--csv"),
    (("--exercise", "softmax", "--format", "exercism"), "--output-dir"),
    (("--exercise", "softmax", "--perf"), "--perf"),
])
def test_folder_usage_errors_name_the_flag(small_class, capsys, argv, named):
    assert run_cli("grade", str(small_class), *argv) == 2
    assert named in capsys.readouterr().err


def test_folder_flags_on_a_single_file_are_usage_errors(capsys):
    assert run_cli("grade", str(SOLUTIONS / "softmax.py"), "--jobs", "2") == 2
    assert "--jobs" in capsys.readouterr().err


GRADE_FOLDER = ("import sys, argparse\nfrom quizprep.cli import grade_command as command\n"
                "parser = argparse.ArgumentParser(); command.register(parser.add_subparsers())\n"
                "args = parser.parse_args(['grade', sys.argv[1], '--exercise', 'softmax', '--jobs', '2', '--json'])\n"
                "sys.exit(args.handler(args))\n")


def children(pid: int) -> list[int]:
    found = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(child) for child in (task / "children").read_text().split()]
    except OSError:
        return []
    return found


def workers_of(grader: int) -> list[int]:
    """The grader's fork servers' children: the processes learner code runs in."""
    return [worker for server in children(grader) for worker in children(server)]


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL])
def test_a_stopped_cohort_leaves_no_worker(tmp_path, signal_number):
    write_class(tmp_path / "class", [("loop", HOSTILE["loop"]), ("loop-too", HOSTILE["loop"])])
    grader = subprocess.Popen([sys.executable, "-c", GRADE_FOLDER, str(tmp_path / "class")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while len(workers_of(grader.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = workers_of(grader.pid) + children(grader.pid)
    assert len(workers) == 4, "both jobs should have a server and a worker running by now"
    time.sleep(1.5)  # into the learner's loops
    grader.send_signal(signal_number)
    assert grader.wait(timeout=20) != 0
    deadline = time.monotonic() + 5  # after SIGKILL the kernel signals the workers (PR_SET_PDEATHSIG)
    while any(process_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in workers:
        assert not process_alive(pid), f"process {pid} outlived the grader ({signal_number!r})"
