"""`quizprep check` warns when the learner's progress references question ids no bank has."""
from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from quizprep.study.store import Store

SAMPLE = Path(__file__).parent / "data" / "valid.yaml"
WHEN = datetime(2026, 11, 20, tzinfo=timezone.utc)


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "quizprep", "check", *args], capture_output=True, text=True)


def answered(db: Path, *question_ids: str) -> None:
    with Store.open(db) as store:
        for question_id in question_ids:
            store.record_answer(question_id=question_id, topic="t", kind="choice", mode="practice", response="1",
                                elapsed_s=3.0, answered_at=WHEN, correct=True, score=1.0)


def test_ids_missing_from_the_banks_are_a_warning_not_an_error(tmp_path: Path) -> None:
    db = tmp_path / "progress.db"
    answered(db, "sample-choice", "renamed-away", "also-gone")
    before = db.read_bytes()
    run = check(str(SAMPLE), "--db", str(db))
    assert run.returncode == 0 and "no errors" in run.stdout
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"warning: {db} holds history for 2 question id(s) that no bank has any more: "
                           "also-gone, renamed-away.")
    assert db.read_bytes() == before


def test_no_warning_when_every_id_is_known_or_there_is_no_database(tmp_path: Path) -> None:
    db = tmp_path / "progress.db"
    assert check(str(SAMPLE), "--db", str(db)).stderr == ""
    assert not db.exists()
    answered(db, "sample-choice")
    assert check(str(SAMPLE), "--db", str(db)).stderr == ""
