"""Fault injection (issue 14): garbled rows and card JSON, a full disk, a lock held by another
process, and a file that is not a quizprep database given as --db. Each case checks the message
the learner sees and that no answer already committed is lost."""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from quizprep.cli import progress as command
from quizprep.study.rows import to_text
from quizprep.study.scheduling import make_scheduler
from quizprep.study.store import Answer, Store, StoreBusy, StoreError
from quizprep.study.storefile import MIGRATIONS, SCHEMA_VERSION

START = datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)
DATA = Path(__file__).parent / "data"


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="quizprep")
    command.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.handler(args)


def answer(store: Store, i: int, response: str | None = None, **extra) -> int:
    from fsrs import Rating

    fields = dict(question_id=f"alpha-{('one', 'many')[i % 2]}", topic="alpha", kind="choice", mode="practice",
                  response=response or f"resp-{i:04d}-{'x' * 24}", elapsed_s=3.0,
                  answered_at=START + timedelta(minutes=i), correct=True, score=1.0, rating=Rating.Good)
    fields.update(extra)
    return store.record_answer(**fields)[0]


def committed(db_path: Path) -> dict[int, tuple]:
    """Every committed answer, read straight from SQLite (not through the code under test)."""
    with closing(sqlite3.connect(db_path)) as raw:
        rows = raw.execute("SELECT id, question_id, response, answered_at FROM answers").fetchall()
    return {row[0]: row[1:] for row in rows}


@pytest.fixture
def history(db_path: Path) -> dict[int, tuple]:
    with Store.open(db_path, scheduler=make_scheduler(fuzzing=False)) as store:
        for i in range(40):
            answer(store, i)
    return committed(db_path)


def as_committed(answers: list[Answer]) -> dict[int, tuple]:
    return {a.id: (a.question_id, a.response, to_text(a.answered_at)) for a in answers}


def moved_aside(db_path: Path) -> list[Path]:
    return [p for p in db_path.parent.iterdir()
            if p.name.startswith(f"{db_path.name}.corrupt-") and not p.name.endswith(("-wal", "-shm"))]


def overwrite(db_path: Path, marker: bytes, offset: int, replacement: bytes) -> bytes:
    """Replace bytes at `offset` from `marker` in the database file (its WAL folded in first)."""
    with closing(sqlite3.connect(db_path)) as raw, raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db_path.read_bytes())
    start = data.index(marker) + offset
    data[start:start + len(replacement)] = replacement
    db_path.write_bytes(bytes(data))
    return bytes(data)


# -- garbled rows ------------------------------------------------------------------------------

def test_random_bytes_in_a_row_are_reported_and_set_aside_and_nothing_else_is_lost(db_path, history, capsys):
    garbled = bytes([0xFF]) + random.Random(1).randbytes(15)  # 0xFF never occurs in UTF-8
    damaged_file = overwrite(db_path, b"resp-0017-", 5, garbled)
    with closing(sqlite3.connect(db_path)) as raw, raw:
        assert raw.execute("PRAGMA quick_check").fetchall() == [("ok",)]  # pages are fine, a row is not
    (damaged_id,) = [i for i, (_, response, _) in history.items() if response.startswith("resp-0017-")]
    intact = {i: row for i, row in history.items() if i != damaged_id}

    assert run_cli("stats", "--db", str(db_path), "--bank", str(DATA / "alpha.yaml")) == 0
    out, err = capsys.readouterr()
    assert (f"notice: 1 answer in {db_path} could not be read (a text field is not readable text) and is left "
            f"out here; the file was not changed") in err
    assert "39 answers" in out and db_path.read_bytes() == damaged_file  # read-only: not a byte written

    with Store.open(db_path) as store:
        assert store.notices == (f"1 answer in {db_path} could not be read (a text field is not readable text) "
                                 f"and was set aside in its damaged_* tables. The rest of your progress is intact.",)
        assert as_committed(store.answers()) == intact
    with closing(sqlite3.connect(db_path)) as raw, raw:
        (kept,) = raw.execute("SELECT id, CAST(response AS BLOB) FROM damaged_answers").fetchall()
    assert kept[0] == damaged_id and garbled in kept[1]  # set aside byte for byte
    with Store.open(db_path) as store:
        assert store.notices == () and len(store.answers()) == 39


@pytest.mark.parametrize("seed", range(8))
def test_random_bytes_anywhere_in_a_rows_values_lose_that_row_only(db_path, history, seed):
    """16 random bytes among the values of answer 17 (its question id, topic, kind, mode, date,
    time taken or response), wherever they land: that row is reported and set aside, the file is
    not moved, and every other answer reads back unchanged."""
    rng = random.Random(seed)
    overwrite(db_path, b"resp-0017-", -rng.randrange(0, 60), rng.randbytes(16))
    (damaged_id,) = [i for i, (_, response, _) in history.items() if response.startswith("resp-0017-")]
    with Store.open(db_path) as store:
        (notice,) = store.notices
        assert notice.startswith(f"1 answer in {db_path} could not be read (")
        assert as_committed(store.answers()) == {i: row for i, row in history.items() if i != damaged_id}
    assert moved_aside(db_path) == []
    with Store.open(db_path) as store:
        assert store.notices == ()


@pytest.mark.parametrize("seed", range(6))
def test_random_bytes_over_a_rows_cell_header_keep_every_other_answer(db_path, history, seed):
    """Bytes that break the page's structure (the cell's length, rowid or record header) get the
    file moved aside; every answer that still reads is copied into the new database unchanged."""
    rng = random.Random(seed)
    damaged_file = overwrite(db_path, b"resp-0017-", -rng.randrange(60, 120), rng.randbytes(16))
    with Store.open(db_path) as store:
        readable, (notice,) = as_committed(store.answers()), store.notices
    assert len(readable) >= 38 and all(history[i] == row for i, row in readable.items())
    if "moved to" in notice:
        (moved,) = moved_aside(db_path)
        assert moved.read_bytes() == damaged_file
        assert notice.endswith(f"a new progress database was started with the {len(readable)} answer(s) that "
                               f"could still be read from it.")


def test_garbled_card_json_is_rebuilt_from_the_answers(db_path, history, capsys):
    with Store.open(db_path, scheduler=make_scheduler(fuzzing=False)) as store:
        before = store.card("alpha-one").to_json()
    overwrite(db_path, before[:30].encode(), 12, b"#" * 16)

    assert run_cli("stats", "--db", str(db_path), "--bank", str(DATA / "alpha.yaml")) == 0
    assert (f"notice: 1 review schedule in {db_path} could not be read (the review schedule does not parse "
            f"(JSONDecodeError)) and is left out here") in capsys.readouterr().err

    with Store.open(db_path, scheduler=make_scheduler(fuzzing=False)) as store:
        assert store.notices[0].endswith("The review schedule of alpha-one was rebuilt from your answers.")
        assert store.card("alpha-one").to_json() == before  # replayed: the same schedule, no fuzzing
        assert len(store.answers()) == 40
    assert committed(db_path) == history


def test_a_card_garbled_while_the_store_is_open_is_rebuilt_when_reviewed(db_path, history):
    from fsrs import Rating

    with (Store.open(db_path, scheduler=make_scheduler(fuzzing=False)) as store,
          closing(sqlite3.connect(db_path)) as raw):
        raw.execute("UPDATE cards SET card = '{\"card_id\": 1}' WHERE question_id = 'alpha-one'")
        raw.commit()
        assert "alpha-one" not in store.cards()  # skipped on reading, never a KeyError
        answer(store, 100, rating=Rating.Good)
        assert store.card("alpha-one").state.name == "Review"  # built on the 20 earlier reviews


# -- a full disk -----------------------------------------------------------------------------

@pytest.fixture
def tiny_filesystem(tmp_path: Path):
    """A 1 MiB tmpfs mounted for the test; only root may mount one."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tiny tmpfs needs root and mount(8); the full-disk test cannot run here")
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=True)


def fill(folder: Path) -> Path:
    filler = folder / "filler"
    handle = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(handle, b"\0" * 4096)
    except OSError:  # no space left
        pass
    finally:
        os.close(handle)
    return filler


def test_a_full_disk_writes_nothing_says_so_and_the_retry_succeeds(tiny_filesystem):
    db_path = tiny_filesystem / "progress.sqlite3"
    with Store.open(db_path) as store:
        kept = [answer(store, i) for i in range(5)]
        filler = fill(tiny_filesystem)
        with pytest.raises(StoreError) as failed:
            answer(store, 5, response="y" * 20_000)
        assert str(failed.value) == (f"could not save to {db_path}: database or disk is full; nothing was "
                                     f"written. Free some disk space, then try again.")
        assert [a.id for a in store.answers()] == kept
        filler.unlink()
        retried = answer(store, 5, response="y" * 20_000)
    assert sorted(committed(db_path)) == kept + [retried]


# -- a lock held by another process ----------------------------------------------------------

LOCK_HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("INSERT INTO sessions (mode, topics, started_at) VALUES ('practice', '', 'x')")
print("locked", flush=True)
sys.stdin.readline()
db.execute("ROLLBACK")
"""


def test_a_held_write_lock_delays_nobody_who_only_reads_and_a_write_can_be_retried(db_path, history, capsys):
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(db_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        began = time.monotonic()
        assert run_cli("stats", "--db", str(db_path), "--bank", str(DATA / "alpha.yaml")) == 0
        with Store.open(db_path, readonly=True, busy_timeout_s=60) as snapshot:
            assert len(snapshot.answers()) == 40
        with Store.open(db_path, busy_timeout_s=60) as store:  # opening takes no write lock
            assert time.monotonic() - began < 30, "reading waited for the writer's lock"
            assert "40 answers" in capsys.readouterr().out
            store_busy = Store.open(db_path, busy_timeout_s=0.1)
            with store_busy, pytest.raises(StoreBusy) as busy:
                answer(store_busy, 40)
            assert str(busy.value) == (f"could not save to {db_path}: another program (another quizprep?) is "
                                       f"writing to it and did not finish in time; nothing was written. Try "
                                       f"again in a moment.")
            holder.communicate("done\n", timeout=30)
            retried = answer(store, 40)
    finally:
        holder.kill()
    assert sorted(committed(db_path)) == sorted(history) + [retried]


ANOTHER_TERMINAL = """
import json, sqlite3, sys
reader = sqlite3.connect(sys.argv[1])
print(json.dumps([row[0] for row in reader.execute("SELECT id FROM answers")]))
reader.close()
"""


def ids_seen_by_another_process(db_path: Path) -> list[int]:
    """What another quizprep (or a restart after a crash) reads from the file."""
    seen = subprocess.run([sys.executable, "-c", ANOTHER_TERMINAL, str(db_path)], capture_output=True, text=True,
                          check=True, timeout=30)
    return json.loads(seen.stdout)


def test_a_saved_answer_is_on_disk_while_a_second_store_was_opened_beside_it(db_path, history):
    """Opening a Store once read the file's header with Python's own open(). Closing that handle
    dropped the SQLite locks of every Store already open on the file in this process, so another
    process, closing last, deleted the write-ahead log: the next answer went to a deleted file,
    unseen by other processes and lost in a crash."""
    with Store.open(db_path) as quiz:
        with Store.open(db_path, readonly=True) as stats:  # `quizprep stats`' snapshot beside the quiz
            assert len(stats.answers()) == 40
        Store.open(db_path).close()
        assert ids_seen_by_another_process(db_path) == sorted(history)
        kept = answer(quiz, 40)
        assert ids_seen_by_another_process(db_path) == sorted(history) + [kept]
    assert sorted(committed(db_path)) == sorted(history) + [kept]


# -- a file that is not a quizprep database --------------------------------------------------

@pytest.mark.parametrize("command_name", ["stats", "report"])
def test_a_text_file_given_as_db_is_refused_and_left_alone(tmp_path, capsys, command_name):
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n")
    extra = ["--out", str(tmp_path / "r.md")] if command_name == "report" else []
    assert run_cli(command_name, *extra, "--db", str(notes), "--bank", str(DATA / "alpha.yaml")) == 1
    assert capsys.readouterr().err == (
        f"quizprep {command_name}: {notes} is not a quizprep progress database (it is not an SQLite database), "
        f"so it was left as it is. Give another file with --db (or $QUIZPREP_DB), or move this one away to "
        f"start a new progress database there.\n")
    assert [p.name for p in tmp_path.iterdir()] == ["notes.md"] and notes.read_text() == "# my notes\n"


def test_another_programs_sqlite_database_is_refused_even_by_the_quiz(tmp_path):
    other = tmp_path / "contacts.db"
    with closing(sqlite3.connect(other)) as raw, raw:
        raw.execute("CREATE TABLE contacts (name TEXT)")
        raw.execute("INSERT INTO contacts VALUES ('Ada')")
    original = other.read_bytes()
    with pytest.raises(StoreError, match="is not a quizprep progress database \\(it is another program's SQLite "
                                         "database\\), so it was left as it is"):
        Store.open(other)
    assert other.read_bytes() == original and sorted(p.name for p in tmp_path.iterdir()) == ["contacts.db"]


def test_an_empty_file_or_an_empty_sqlite_database_becomes_a_progress_database(tmp_path):
    empty, blank = tmp_path / "empty.db", tmp_path / "blank.db"
    empty.touch()
    sqlite3.connect(blank).execute("VACUUM").connection.close()
    for path in (empty, blank):
        with Store.open(path) as store:
            answer(store, 1)
        assert len(committed(path)) == 1


def test_a_missing_database_reads_as_empty_and_is_not_created(tmp_path, capsys, monkeypatch):
    """The usual database not there yet (a first run) reads as empty; one named with --db that is
    not there is a typo (issue 21): said so, not shown as zeros. Neither is created."""
    path = tmp_path / "nothing-yet.db"
    monkeypatch.setenv("QUIZPREP_DB", str(path))
    assert run_cli("stats", "--bank", str(DATA / "alpha.yaml")) == 0
    assert "0 answers" in capsys.readouterr().out and not path.exists() and list(tmp_path.iterdir()) == []
    assert run_cli("stats", "--db", str(path), "--bank", str(DATA / "alpha.yaml")) == 1
    assert "no progress database at" in capsys.readouterr().err and list(tmp_path.iterdir()) == []


def test_a_damaged_quizprep_database_given_as_db_is_still_moved_aside(db_path, history):
    damaged_file = overwrite(db_path, b"SQLite format 3\x00", 100, os.urandom(400))  # page 1's b-tree
    with Store.open(db_path) as store:
        (notice,) = store.notices
        assert store.answers() == []
    (moved,) = moved_aside(db_path)
    assert f"it was moved to {moved}" in notice
    assert moved.read_bytes() == damaged_file  # what is left of the answers is kept, untouched


def test_a_database_of_the_first_schema_is_recognised_and_upgraded(db_path):
    with closing(sqlite3.connect(db_path)) as raw, raw:  # as quizprep 0.1 left it: no application id yet
        for statement in MIGRATIONS[0]:
            raw.execute(statement)
        raw.execute("PRAGMA user_version = 1")
        raw.execute("INSERT INTO answers (question_id, topic, kind, mode, answered_at, elapsed_s, response) "
                    "VALUES ('q', 't', 'free', 'practice', '2025-03-03T09:00:00.000000+00:00', 1.0, 'kept')")
    with Store.open(db_path) as store:
        assert store.schema_version() == SCHEMA_VERSION and [a.response for a in store.answers()] == ["kept"]
    with closing(sqlite3.connect(db_path)) as raw, raw:
        assert raw.execute("PRAGMA application_id").fetchone()[0] == 0x51505250
