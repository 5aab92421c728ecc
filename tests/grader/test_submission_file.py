"""The learner's file is read once, through descriptors that follow no link (submission_file):
a file checked and then swapped for a link, or its folder swapped for one, is refused, not read.

Each race is made deterministic by swapping at the point between the check and the read."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import SOLUTIONS
from quizprep.cli import grade_command as command
from quizprep.grader import submission_file
from quizprep.grader.submission_file import SubmissionUnreadable, canonical, open_regular, read_bytes
from test_grade_command import run_cli

SECRET_LINE = "root:$6$salt$hash:19000:0:99999:7:::"


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """A class folder with one honest file, and a secret elsewhere that a link could reach."""
    secret = tmp_path / "elsewhere" / "attention.py"
    secret.parent.mkdir()
    secret.write_text(f"# {SECRET_LINE}\nraise SystemExit('{SECRET_LINE}')\n")
    folder = tmp_path / "class"
    folder.mkdir()
    honest = folder / "attention.py"
    honest.write_text((SOLUTIONS / "attention.py").read_text())
    return {"secret": secret, "folder": folder, "file": honest}


def swap_for_link(path: Path, target: Path) -> None:
    path.unlink()
    path.symlink_to(target)


def test_a_regular_file_is_read_whole(layout):
    assert read_bytes(canonical(layout["file"]), 1 << 20) == layout["file"].read_bytes()


def test_the_file_itself_swapped_for_a_link_is_refused(layout):
    checked = canonical(layout["file"])
    swap_for_link(layout["file"], layout["secret"])
    with pytest.raises(SubmissionUnreadable, match="symbolic link"):
        read_bytes(checked, 1 << 20)


def test_its_folder_swapped_for_a_link_is_refused(layout):
    checked = canonical(layout["file"])
    layout["folder"].rename(layout["folder"].with_name("moved"))
    layout["folder"].symlink_to(layout["secret"].parent)  # the same name, now the secret's folder
    with pytest.raises(SubmissionUnreadable, match="class is a symbolic link"):
        read_bytes(checked, 1 << 20)


def test_a_fifo_swapped_in_is_refused_without_waiting_for_a_writer(layout):
    layout["file"].unlink()
    os.mkfifo(layout["file"])
    with pytest.raises(SubmissionUnreadable, match="not a regular file"):
        open_regular(canonical(layout["file"]))


def test_a_file_above_the_limit_is_refused(layout):
    with pytest.raises(SubmissionUnreadable, match="larger than"):
        read_bytes(canonical(layout["file"]), 16)


def test_a_link_inside_the_folder_is_followed_once_and_a_link_out_is_not(layout):
    inside = layout["folder"] / "mine.py"
    inside.symlink_to(layout["file"])
    outside = layout["folder"] / "theirs.py"
    outside.symlink_to(layout["secret"])
    assert submission_file.target_inside(inside, layout["folder"]) == layout["file"].resolve()
    assert submission_file.target_inside(outside, layout["folder"]) is None


def test_the_grader_reads_no_source_line_through_a_swapped_link(layout):
    swap_for_link(layout["file"], layout["secret"])
    assert submission_file.source_text(layout["file"], 1 << 20) == ""


def test_a_worker_never_loads_a_file_swapped_after_its_session_was_made(layout):
    from quizprep.grader.failures import LearnerFailure
    from quizprep.grader.worker_session import WorkerSession

    session = WorkerSession(layout["file"])
    swap_for_link(layout["file"], layout["secret"])
    with pytest.raises(LearnerFailure, match="symbolic link") as failure:
        session.launch()
    assert session.process is None and SECRET_LINE not in str(failure.value)


def test_the_command_grades_what_it_checked(layout, monkeypatch, capsys):
    # the swap lands between the command's check of the path and the worker's copy of the file
    checked = command.target_inside

    def check_then_swap(path: Path, folder: Path) -> Path | None:
        target = checked(path, folder)
        swap_for_link(layout["file"], layout["secret"])
        return target

    monkeypatch.setattr(command, "target_inside", check_then_swap)
    assert run_cli("grade", str(layout["file"]), "--json", "--no-record", "--device", "cpu") == 1
    out = capsys.readouterr().out
    payload = json.loads(out)
    assert SECRET_LINE not in out and "$6$" not in out
    assert "symbolic link" in json.dumps(payload["checks"]), payload["checks"]
