"""The quiz app when the progress database fails (issue 14): a message on screen, never a
traceback; the answer stays on screen until it is saved; a held lock is waited out visibly; a
garbled card does not lock the learner out."""
from __future__ import annotations

import re
import sqlite3
from contextlib import closing

from choices import keys_for
from quizprep.study.store import Store, StoreError
from quizprep.tui import app as app_module, flow as flow_module
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.stats import StatsScreen

SIZE = (80, 24)
FULL = ("could not save to progress.sqlite3: database or disk is full; nothing was written. "
        "Free some disk space, then try again.")


def messages(app, severity: str, title: str | None = None) -> list[str]:
    return [n.message for n in app._notifications if n.severity == severity and title in (None, n.title)]


async def test_an_answer_that_cannot_be_saved_stays_on_screen_until_a_retry_saves_it(make_app, stored, monkeypatch):
    record = Store.record_answer
    failures = iter([StoreError(FULL)])

    def full_disk_once(self, **fields):
        error = next(failures, None)
        if error is not None:
            raise error
        return record(self, **fields)

    monkeypatch.setattr(Store, "record_answer", full_disk_once)
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*keys_for(app, 0), "enter")
        assert isinstance(app.screen, QuestionScreen)
        note = app.screen.query_one("#answer-note")  # under the field: a toast would stand over it
        assert note.display and str(note.content) == f"Answer not saved: {FULL} It is still here: Enter tries again."
        assert messages(app, "error") == []
        await pilot.press("enter")  # the pick is still made: Enter sends it again
        assert isinstance(app.screen, FeedbackScreen)
    with stored() as store:
        assert [(a.question_id, a.response) for a in store.answers()] == [("alpha-choice", "1")]


async def test_a_lock_held_at_session_start_is_waited_out_with_a_visible_retry(make_app, db, stored, monkeypatch):
    monkeypatch.setattr(app_module, "BUSY_TIMEOUT_S", 0.05)
    monkeypatch.setattr(flow_module, "RETRY_PAUSE_S", 0.05)
    monkeypatch.setattr(flow_module, "BUSY_RETRIES", 1000)  # a loaded machine never runs out of tries here
    Store.open(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        while not messages(app, "warning", "Progress database busy"):
            await pilot.pause(0.05)
        waiting = messages(app, "warning", "Progress database busy")[0]  # earlier tries' notes may be gone
        assert re.fullmatch(f"Waiting for another program to finish writing to {re.escape(str(db))} "
                            f"\\(attempt [0-9]+ of {flow_module.BUSY_RETRIES}\\)…", waiting), waiting
        assert isinstance(app.screen, HomeScreen)
        holder.execute("ROLLBACK")
        while not isinstance(app.screen, QuestionScreen):
            await pilot.pause(0.05)
        await pilot.press("1", "enter")
    holder.close()
    with stored() as store:
        assert len(store.answers()) == 1


async def test_a_session_that_cannot_start_on_a_full_disk_is_a_message_and_home_stays(make_app, monkeypatch):
    def full_disk(self, *args, **fields):
        raise StoreError(FULL)

    monkeypatch.setattr(Store, "start_session", full_disk)
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert messages(app, "error") == [FULL] and isinstance(app.screen, HomeScreen)
        await pilot.press("s")  # the rest of the app still works
        assert isinstance(app.screen, StatsScreen)


async def test_a_garbled_card_is_reported_and_the_rest_of_the_progress_is_shown(make_app, db):
    from fsrs import Rating

    with Store.open(db) as store:
        for question_id in ("alpha-choice", "alpha-multi"):
            store.record_answer(question_id=question_id, topic="alpha", kind="choice", mode="practice",
                                response="1", elapsed_s=2.0, answered_at=app_module.utc_now(), correct=True,
                                score=1.0, rating=Rating.Good)
    with closing(sqlite3.connect(db)) as raw, raw:
        raw.execute("UPDATE cards SET card = 'not json' WHERE question_id = 'alpha-multi'")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        while not messages(app, "error"):  # the rows are checked once Home is on screen
            await pilot.pause(0.05)
        (notice,) = messages(app, "error")
        assert notice.startswith(f"1 review schedule in {db} could not be read")
        assert notice.endswith("The review schedule of alpha-multi was rebuilt from your answers.")
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("s")
        assert isinstance(app.screen, StatsScreen) and app.screen.stats.total_answers == 2


async def test_rubric_ticks_that_could_not_be_saved_are_offered_again_as_ticked(make_app, stored, monkeypatch):
    from quizprep.tui.screens.rubric import RubricScreen

    assess = Store.record_assessment
    failures = iter([StoreError(FULL)])

    def full_disk_once(self, *args, **fields):
        error = next(failures, None)
        if error is not None:
            raise error
        return assess(self, *args, **fields)

    monkeypatch.setattr(Store, "record_assessment", full_disk_once)
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        while (question := app.screen.showing.question).id != "alpha-free":
            typed = ("1",) if question.kind == "choice" else tuple("1 GiB")
            await pilot.press(*typed, "enter", "enter")
        await pilot.press(*"my answer", "ctrl+s", "1", "2", "enter")
        assert isinstance(app.screen, RubricScreen) and messages(app, "error") == [FULL]
        assert text_of_score(app.screen) == "Score: 3 / 4 = 75%"  # the ticks are still there
        await pilot.press("enter")
        assert not isinstance(app.screen, RubricScreen)
    with stored() as store:
        [answer] = store.answers(question_id="alpha-free")
    assert answer.score == 0.75 and answer.response == "my answer"


def text_of_score(screen) -> str:
    return str(screen.query_one("#rubric-score").content)


def test_a_file_that_is_not_a_progress_database_stops_the_quiz_and_is_left_alone(make_app, tmp_path, capfd):
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n")
    app = make_app(db=notes)
    app.run(headless=True)
    assert app.return_code == 1
    printed = "".join("".join(capfd.readouterr()).split())  # the console wraps long lines anywhere
    assert "isnotaquizprepprogressdatabase(itisnotanSQLitedatabase),soitwasleftasitis." in printed
    assert notes.read_text() == "# my notes\n" and [p.name for p in tmp_path.iterdir()] == ["notes.md"]
