from __future__ import annotations

import random
import signal
import sqlite3
from contextlib import closing
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quizprep.study import storefile
from quizprep.study.dbpath import resolve_db_path
from quizprep.study.scheduling import make_scheduler, review
from quizprep.study.store import Store, StoreBusy, StoreError
from quizprep.study.storefile import APPLICATION_ID, SCHEMA_VERSION

START = datetime(2025, 3, 3, 9, 0, tzinfo=timezone.utc)

ROOT = Path(__file__).resolve().parents[2]


def record(store: Store, question_id: str = "q-1", *, correct: bool | None = True, rating=None, **extra):
    from fsrs import Rating

    if rating is None and correct is not None:
        rating = Rating.Good if correct else Rating.Again
    fields = dict(question_id=question_id, topic="t", kind="choice", mode="practice", response="1",
                  elapsed_s=3.5, answered_at=START, correct=correct, score=None if correct is None else float(correct),
                  rating=rating)
    fields.update(extra)  # a free response passes correct=None, score=None, rating=None
    return store.record_answer(**fields)


def test_new_database_is_wal_at_current_schema(db_path):
    with Store.open(db_path) as store:
        assert store.schema_version() == SCHEMA_VERSION
        assert store.notices == ()
    with closing(sqlite3.connect(db_path)) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_answer_is_stored_with_everything_a_report_needs(store, db_path):
    answer_id, card = record(store, "q-num", kind="numeric", response="32 GiB", seed=1234, mode="mock",
                             correct=False, score=0.0, rating=1)
    with Store.open(db_path) as other:  # a second connection sees the committed row
        answer = other.answer(answer_id)
    assert (answer.question_id, answer.kind, answer.mode, answer.response, answer.seed) == \
        ("q-num", "numeric", "mock", "32 GiB", 1234)
    assert (answer.correct, answer.score, answer.rating, answer.elapsed_s) == (False, 0.0, 1, 3.5)
    assert answer.answered_at == START and answer.answered_at.utcoffset().total_seconds() == 0
    assert card is not None and store.card("q-num").to_dict() == card.to_dict()


def test_naive_times_are_refused(store):
    with pytest.raises(ValueError, match="timezone-aware"):
        record(store, answered_at=START.replace(tzinfo=None))
    assert store.answers() == []


def test_free_response_is_kept_until_assessed_once(store):
    from fsrs import Rating

    answer_id, card = record(store, "q-free", kind="free", response="my essay", correct=None)
    assert store.answer(answer_id).rating is None
    assert card is None and store.card("q-free") is None
    assert [a.id for a in store.unassessed()] == [answer_id]
    store.record_assessment(answer_id, [("a", 2, True), ("b", 1, False)], score=2 / 3, correct=True,
                            rating=Rating.Hard, assessed_at=START)
    assert store.unassessed() == []
    assert [(m.criterion, m.weight, m.met) for m in store.rubric_marks(answer_id)] == [("a", 2, True), ("b", 1, False)]
    assert store.card("q-free") is not None
    with pytest.raises(StoreError, match="already been assessed"):
        store.record_assessment(answer_id, [("a", 2, True)], score=1.0, correct=True,
                                rating=Rating.Easy, assessed_at=START)
    assert len(store.rubric_marks(answer_id)) == 2  # the refused assessment wrote nothing


def test_db_path_from_option_then_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("QUIZPREP_DB", str(tmp_path / "env.db"))
    assert resolve_db_path(None) == tmp_path / "env.db"
    assert resolve_db_path(tmp_path / "opt.db") == tmp_path / "opt.db"
    monkeypatch.delenv("QUIZPREP_DB")
    assert resolve_db_path(None).name == "progress.sqlite3"


def moved_aside(db_path: Path, tag: str) -> list[Path]:
    """The database files moved aside (their -wal and -shm companions left out)."""
    return sorted(p for p in db_path.parent.iterdir()
                  if p.name.startswith(f"{db_path.name}.{tag}-") and not p.name.endswith(("-wal", "-shm")))


def test_garbage_at_the_default_path_is_moved_aside_not_overwritten(tmp_path, monkeypatch):
    """Only quizprep writes to its default path: whatever is there is a damaged database of its own."""
    monkeypatch.delenv("QUIZPREP_DB", raising=False)
    monkeypatch.setattr("platformdirs.user_data_dir", lambda *args, **kwargs: str(tmp_path))
    db_path = tmp_path / "progress.sqlite3"
    garbage = b"this is not sqlite\x00" * 300
    db_path.write_bytes(garbage)
    with Store.open() as store:
        record(store)
        (notice,) = store.notices
    (moved,) = moved_aside(db_path, "corrupt")
    assert moved.read_bytes() == garbage
    assert notice == (f"{db_path} is not a readable quizprep database (it is not an SQLite database); it was "
                      f"moved to {moved} and a new, empty progress database was started.")
    with Store.open() as reopened:
        assert reopened.notices == () and len(reopened.answers()) == 1


def damage_page(db_path: Path, page_of: bytes | int) -> bytes:
    """Random bytes over one whole 4 KiB page: page number `page_of`, or the page holding those bytes."""
    raw = sqlite3.connect(db_path)
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    data = bytearray(db_path.read_bytes())
    page = page_of if isinstance(page_of, int) else data.index(page_of) // 4096
    data[page * 4096:(page + 1) * 4096] = random.Random(page).randbytes(4096)
    db_path.write_bytes(bytes(data))
    return bytes(data)


def test_damaged_index_pages_are_moved_aside_and_every_answer_is_copied_back(db_path):
    with Store.open(db_path) as store:
        for i in range(300):
            record(store, f"q-{i}", response="x" * 200)
        before = store.answers()
    for page in (3, 4):  # pages 4 and 5 of the file: the two indexes of the answers
        data = damage_page(db_path, page)
    with Store.open(db_path) as store:
        assert store.answers() == before
        (notice,) = store.notices
    (moved,) = moved_aside(db_path, "corrupt")
    assert moved.read_bytes() == data
    assert notice.startswith(f"{db_path} is damaged (")  # then SQLite's own words, which differ by version
    assert notice.endswith(f"; it was moved to {moved} and a new progress database was started with the 300 "
                           f"answer(s) that could still be read from it.")


def test_a_damaged_table_page_loses_only_the_answers_on_it(db_path):
    with Store.open(db_path) as store:
        for i in range(300):
            record(store, f"q-{i}", response=f"answer {i} " + "x" * 200)
        before = {a.id: a for a in store.answers()}
    data = damage_page(db_path, b"answer 150 ")
    with Store.open(db_path) as store:
        copied = store.answers()
        (notice,) = store.notices
    assert 250 < len(copied) < 300 and all(before[a.id] == a for a in copied)
    assert "answer 150 " not in {a.response[:11] for a in copied}
    assert f"started with the {len(copied)} answer(s) that could still be read from it" in notice
    (moved,) = moved_aside(db_path, "corrupt")
    assert moved.read_bytes() == data


def test_newer_schema_is_moved_aside_with_its_wal(db_path):
    raw = sqlite3.connect(db_path)
    raw.execute("PRAGMA journal_mode = WAL")
    raw.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    raw.execute("CREATE TABLE future (x)")
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.commit()
    raw.close()
    original = db_path.read_bytes()
    with Store.open(db_path) as store:
        (notice,) = store.notices
        assert store.schema_version() == SCHEMA_VERSION
    (moved,) = moved_aside(db_path, f"v{SCHEMA_VERSION + 1}")
    assert "newer quizprep" in notice and str(moved) in notice
    assert moved.read_bytes() == original
    with closing(sqlite3.connect(moved)) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1


def test_unopenable_path_raises_and_moves_nothing(tmp_path):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with pytest.raises(StoreError, match="cannot open"):
        Store.open(folder)
    assert folder.is_dir() and [p.name for p in tmp_path.iterdir()] == ["a-folder"]


def test_migration_to_a_new_version_keeps_answers(db_path, monkeypatch):
    with Store.open(db_path) as store:
        record(store, "q-kept")
    migrations = storefile.MIGRATIONS + [("ALTER TABLE answers ADD COLUMN hint_used INTEGER DEFAULT 0",)]
    monkeypatch.setattr(storefile, "MIGRATIONS", migrations)
    monkeypatch.setattr(storefile, "SCHEMA_VERSION", len(migrations))
    with Store.open(db_path) as store:
        assert store.schema_version() == SCHEMA_VERSION + 1
        assert [a.question_id for a in store.answers()] == ["q-kept"]
        assert store.notices == ()


def test_failed_migration_rolls_back_to_the_old_version(db_path, monkeypatch):
    with Store.open(db_path) as store:
        record(store, "q-kept")
    migrations = storefile.MIGRATIONS + [("CREATE TABLE extra (x)", "THIS IS NOT SQL")]
    monkeypatch.setattr(storefile, "MIGRATIONS", migrations)
    monkeypatch.setattr(storefile, "SCHEMA_VERSION", len(migrations))
    with pytest.raises(StoreError):
        Store.open(db_path)
    with closing(sqlite3.connect(db_path)) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert raw.execute("SELECT count(*) FROM sqlite_master WHERE name = 'extra'").fetchone()[0] == 0
        assert raw.execute("SELECT question_id FROM answers").fetchall() == [("q-kept",)]


CRASHING_LEARNER = textwrap.dedent("""
    import itertools, random, sys
    from datetime import datetime, timedelta, timezone
    from quizprep.bank import load_banks
    from quizprep.study import session
    from quizprep.study import builders
    from quizprep.study.store import Store

    questions = load_banks([sys.argv[2]]).questions
    store = Store.open(sys.argv[1])
    clock = [datetime(2025, 3, 3, tzinfo=timezone.utc)]
    def now():
        return clock[0]
    for round_ in itertools.count():
        run = builders.practice(store, questions, now=now, rng=random.Random(round_))
        while (showing := run.next()) is not None:
            clock[0] += timedelta(seconds=7)
            question = showing.question
            if question.kind == "choice":
                fb = run.answer_choice(showing, [0])
                print("answer", fb.answer_id, question.id, fb.response, flush=True)
            elif question.kind == "numeric":
                fb = run.answer_numeric(showing, str(showing.draw.answer))
                print("answer", fb.answer_id, question.id, fb.response, flush=True)
            else:
                pending = run.answer_free(showing, f"essay {round_}")
                print("answer", pending.answer_id, question.id, pending.response, flush=True)
                fb = run.assess(pending, [True] * len(question.rubric))
                print("assessed", fb.answer_id, flush=True)
""")


def test_kill_9_mid_session_loses_no_committed_answer(db_path, tmp_path):
    script = tmp_path / "learner.py"
    script.write_text(CRASHING_LEARNER)
    bank = Path(__file__).parent / "data" / "alpha.yaml"
    child = subprocess.Popen([sys.executable, str(script), str(db_path), str(bank)], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reported, assessed = {}, set()
    try:
        while len(reported) < 60:
            line = child.stdout.readline()
            assert line, child.stderr.read()
            event, answer_id, *rest = line.split(maxsplit=3)
            if event == "answer":
                reported[int(answer_id)] = (rest[0], rest[1].rstrip("\n"))
            else:
                assessed.add(int(answer_id))
    finally:
        child.send_signal(signal.SIGKILL)  # while it keeps answering: no clean shutdown
        child.wait()
    assert child.returncode == -signal.SIGKILL
    with Store.open(db_path) as store:
        assert store.notices == ()
        kept = {a.id: a for a in store.answers()}
        marks = {answer_id: len(store.rubric_marks(answer_id)) for answer_id in assessed}
    with closing(sqlite3.connect(db_path)) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    for answer_id, (question_id, response) in reported.items():
        assert (kept[answer_id].question_id, kept[answer_id].response) == (question_id, response)
    for answer_id in assessed:
        assert kept[answer_id].assessed and marks[answer_id] == 3
    assert assessed, "the child should have self-assessed at least one free response"


CONCURRENT_WRITER = textwrap.dedent("""
    import sys
    from datetime import datetime, timedelta, timezone
    from fsrs import Rating
    from quizprep.study.scheduling import make_scheduler, review
    from quizprep.study.store import Store

    name, count = sys.argv[2], int(sys.argv[3])
    start = datetime(2025, 3, 3, tzinfo=timezone.utc)
    with Store.open(sys.argv[1], scheduler=make_scheduler(fuzzing=False)) as store:
        print("ready", flush=True)
        sys.stdin.readline()
        for i in range(count):
            store.record_answer(question_id=f"shared-{i % 5}", topic="t", kind="choice", mode="practice",
                                response=name, elapsed_s=1.0, answered_at=start + timedelta(minutes=i),
                                correct=True, score=1.0, rating=Rating.Good)
""")


def test_two_processes_writing_at_once_keep_every_answer(db_path, tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(CONCURRENT_WRITER)
    Store.open(db_path).close()
    count = 150
    writers = [subprocess.Popen([sys.executable, str(script), str(db_path), name, str(count)], cwd=ROOT,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for name in ("one", "two")]
    for writer in writers:
        assert writer.stdout.readline() == "ready\n", writer.stderr.read()
    for writer in writers:  # release both together so their transactions overlap
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    with Store.open(db_path) as store:
        answers = store.answers()
        assert sorted(a.response for a in answers) == ["one"] * count + ["two"] * count
        assert sorted(store.cards()) == [f"shared-{i}" for i in range(5)]
    with closing(sqlite3.connect(db_path)) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_each_card_review_reads_the_other_instances_update(db_path):
    """Two open stores on one file: a review by one builds on the card the other just wrote."""
    from fsrs import Rating

    scheduler = make_scheduler(fuzzing=False)
    with Store.open(db_path, scheduler=scheduler) as first, Store.open(db_path, scheduler=scheduler) as second:
        _, after_first = record(first, "q", rating=Rating.Again)
        _, after_second = record(second, "q", rating=Rating.Good, answered_at=START.replace(minute=30))
    later = START.replace(minute=30)
    on_first = review(scheduler, after_first, "q", Rating.Good, later).to_json()
    assert after_second.to_json() == on_first  # built on the first store's card...
    assert on_first != review(scheduler, None, "q", Rating.Good, later).to_json()  # ...not on a fresh one


def test_a_write_blocked_by_another_instance_fails_cleanly_and_can_be_retried(db_path):
    with Store.open(db_path, busy_timeout_s=0.05) as store:
        with closing(sqlite3.connect(db_path, isolation_level=None)) as blocker:
            blocker.execute("BEGIN IMMEDIATE")
            with pytest.raises(StoreBusy, match="could not save .* nothing was written"):
                record(store, "q-blocked")
            blocker.execute("ROLLBACK")
        record(store, "q-blocked")
        assert [a.question_id for a in store.answers()] == ["q-blocked"]


HISTORY = st.lists(st.tuples(st.sampled_from(["q1", "q2", "q3"]), st.sampled_from(["t1", "t2"]),
                             st.sampled_from([None, 0.0, 0.5, 1.0]), st.integers(0, 2)), max_size=25)


@settings(max_examples=60, deadline=None)
@given(history=HISTORY)
def test_aggregates_match_the_answers_they_summarise(tmp_path_factory, history):
    """topic_scores and latest_correct (computed in SQLite for the home screen) agree with the
    same figures computed from every answer, ties in time included."""
    path = tmp_path_factory.mktemp("aggregates") / "progress.sqlite3"
    moment = datetime(2025, 1, 1, tzinfo=timezone.utc)
    with Store.open(path, scheduler=make_scheduler(fuzzing=False)) as store:
        for question_id, topic, score, minutes in history:
            moment += timedelta(minutes=minutes)  # 0 minutes: two answers at the same instant
            store.record_answer(question_id=question_id, topic=topic, kind="free", mode="practice",
                                response="x", elapsed_s=1.0, answered_at=moment, score=score,
                                correct=None if score is None else score >= 0.5)
        answers = store.answers()
        expected_scores = {}
        for topic in {a.topic for a in answers}:
            scores = [a.score for a in answers if a.topic == topic and a.assessed]
            expected_scores[topic] = (len(scores), sum(scores) / len(scores) if scores else None)
        assert store.topic_scores() == expected_scores  # scores are halves: sums and means are exact
        assert store.latest_correct() == {a.question_id: a.correct for a in answers if a.assessed}
