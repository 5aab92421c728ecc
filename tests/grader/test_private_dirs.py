"""A grader killed with SIGKILL cannot remove its workers' private folders: the next grader does."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from quizprep.grader import private_dirs


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_folders_of_graders_that_are_gone_are_swept_and_a_running_graders_stay(tmp_path: Path) -> None:
    gone = tmp_path / f"{private_dirs.PREFIX}{_dead_pid()}-abc"
    (gone / "in").mkdir(parents=True)
    (gone / "in" / "submission.py").write_text("x = 1\n")
    running = tmp_path / f"{private_dirs.PREFIX}{os.getpid()}-def"
    running.mkdir()
    unnamed = tmp_path / f"{private_dirs.PREFIX}xyz"  # not a grader's name: left alone
    unnamed.mkdir()
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("kept")
    (gone / "link").symlink_to(target)

    assert private_dirs.sweep(str(tmp_path)) == [str(gone)]
    assert not gone.exists() and running.is_dir() and unnamed.is_dir()
    assert (target / "keep.txt").read_text() == "kept"  # a link inside is removed, not followed


def test_a_worker_folder_is_named_after_its_grader(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(private_dirs.tempfile, "tempdir", str(tmp_path))
    made = Path(private_dirs.make())
    assert made.parent == tmp_path and made.name.startswith(f"{private_dirs.PREFIX}{os.getpid()}-")


def test_the_next_grade_removes_what_a_killed_grader_left(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    solution = Path(__file__).parents[1] / "solutions" / "attention.py"
    killed = subprocess.Popen([sys.executable, "-m", "quizprep", "grade", str(solution)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(f"{private_dirs.PREFIX}{killed.pid}-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait()
    assert list(tmp_path.glob(f"{private_dirs.PREFIX}{killed.pid}-*")), "the killed grader left its folder"

    subprocess.run([sys.executable, "-m", "quizprep", "grade", str(solution)], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300, check=False)
    assert not list(tmp_path.glob(f"{private_dirs.PREFIX}{killed.pid}-*"))
    assert not list(tmp_path.glob(f"{private_dirs.PREFIX}*"))  # the second grader cleaned up after itself
