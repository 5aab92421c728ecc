"""Every flow of the quiz app, driven with Pilot as a learner would, checked against the database."""
from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from textual.widgets import DataTable, Input, Markdown

from choices import keys_for
from quizprep.study.session import Showing
from quizprep.study.store import Store
from quizprep.tui.app import DARK, LIGHT
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.help import HelpScreen
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.question import QuestionScreen
from quizprep.tui.screens.report import ReportScreen
from quizprep.tui.screens.rubric import RubricScreen
from quizprep.tui.screens.stats import StatsScreen

SIZE = (80, 24)
DATA = Path(__file__).parent / "data"


def text_of(screen, selector: str) -> str:
    widget = screen.query_one(selector)
    return widget.source if isinstance(widget, Markdown) else str(widget.content)


def row_text(table: DataTable, key: str) -> list[str]:
    return [str(cell) for cell in table.get_row(key)]


def showing(app) -> Showing:
    assert isinstance(app.screen, QuestionScreen), f"expected a question, on {app.screen!r}"
    return app.screen.showing


async def answer_until(app, pilot, question_id: str) -> None:
    """Answer choice questions with their first choice (and go on) until `question_id` is shown."""
    while showing(app).question.id != question_id:
        await pilot.press(*keys_for(app, 0), "enter")
        await pilot.press("enter")


async def test_choice_right_is_saved_and_each_choice_explained(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        assert showing(app).question.id == "alpha-choice"
        await pilot.press(*keys_for(app, 0), "enter")
        assert isinstance(app.screen, FeedbackScreen)
        assert text_of(app.screen, "#verdict") == "✓ Correct"
        feedback = text_of(app.screen, "#feedback")
        assert "To save FLOPs — The scaling is one elementwise multiply" in feedback
        assert "(your pick)" in feedback
    with stored() as store:
        [answer] = store.answers()
    assert (answer.question_id, answer.response, answer.correct) == ("alpha-choice", "1", True)


async def test_choice_wrong_says_why_the_pick_is_wrong(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*keys_for(app, 2), "enter")
        assert text_of(app.screen, "#verdict") == "✗ Not quite"
        assert "To make the softmax sum to 1 *(your pick)* — Softmax always sums to 1" in text_of(
            app.screen, "#feedback")
    with stored() as store:
        assert [(a.response, a.correct) for a in store.answers()] == [("3", False)]


async def test_several_correct_choices_are_toggled_with_number_keys(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await answer_until(app, pilot, "alpha-multi")
        assert "Select all that apply." in text_of(app.screen, ".hint")
        await pilot.press(*keys_for(app, 0, 2, 1, 2), "enter")  # the third toggled on, then off again
        assert text_of(app.screen, "#verdict") == "✓ Correct"
    with stored() as store:
        assert store.answers(question_id="alpha-multi")[0].response == "1,2"


async def test_enter_without_a_pick_judges_nothing(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        assert isinstance(app.screen, QuestionScreen)
        note = app.screen.query_one("#answer-note")  # under the choices, not a toast over them
        assert note.display and "Nothing is picked yet: press the number of a choice" in str(note.content)
        assert not [n for n in app._notifications if "Nothing is picked" in n.message]
    with stored() as store:
        assert store.answers() == []


async def test_numeric_right_in_other_units_with_live_understanding(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await answer_until(app, pilot, "alpha-numeric")
        draw = showing(app).draw
        gib = draw.answer / 2**30
        typed = f"{gib:g} GiB"
        await pilot.press(*typed)
        understood = text_of(app.screen, "#understood")
        assert understood.startswith("understood as ") and f"({draw.answer:,} B)" in understood
        await pilot.press("enter")
        assert text_of(app.screen, "#verdict") == "✓ Correct"
        feedback = text_of(app.screen, "#feedback")
        seq = draw.values["seq"]
        # The worked computation uses this draw's numbers.
        assert f"per_token × seq = 131,072 × {seq:,} = {gib:g} GiB" in feedback
    with stored() as store:
        [answer] = store.answers(question_id="alpha-numeric")
    assert answer.correct and answer.seed == draw.seed and answer.response == typed


async def test_numeric_typical_slip_is_named(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await answer_until(app, pilot, "alpha-numeric")
        half = showing(app).draw.answer // 2
        await pilot.press(*f"{half:.3e} B", "enter")
        assert text_of(app.screen, "#verdict") == "✗ Not quite"
        assert "only K or only V was counted" in text_of(app.screen, "#feedback")
    with stored() as store:
        assert store.answers(question_id="alpha-numeric")[0].correct is False


async def test_unreadable_number_is_flagged_and_not_recorded(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await answer_until(app, pilot, "alpha-numeric")
        await pilot.press(*"12 parsecs")
        assert "unknown unit 'parsecs'" in text_of(app.screen, "#understood")
        await pilot.press("enter")
        assert isinstance(app.screen, QuestionScreen)
    with stored() as store:
        assert store.answers(question_id="alpha-numeric") == []


async def test_free_response_then_rubric_scoring(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await answer_until(app, pilot, "alpha-numeric")
        await pilot.press(*"1 GiB", "enter", "enter")
        assert showing(app).question.id == "alpha-free"
        await pilot.press(*"Var(q.k) = d_k; big scores saturate softmax", "ctrl+s")
        assert isinstance(app.screen, RubricScreen)
        assert text_of(app.screen, "#learner-answer") == "Var(q.k) = d_k; big scores saturate softmax"
        assert "i.i.d. unit-variance" in text_of(app.screen, "#model-answer")
        notes = text_of(app.screen, "#rubric-notes")
        assert "And in fp16, what else can go wrong?" in notes and "numerical overflow" in notes
        await pilot.press("1", "2")
        assert text_of(app.screen, "#rubric-score") == "Score: 3 / 4 = 75%"
        await pilot.press("2", "2", "enter")
    with stored() as store:
        [answer] = store.answers(question_id="alpha-free")
        marks = [(m.criterion, m.met) for m in store.rubric_marks(answer.id)]
    assert answer.score == 0.75 and answer.correct
    assert marks == [("derives Var(q·k) = d_k", True), ("mentions softmax saturation", True),
                     ("mentions vanishing gradients", False)]


async def test_practice_ends_with_a_report_and_home_shows_progress(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, HomeScreen)
        table = app.screen.query_one(DataTable)
        assert row_text(table, "beta")[1:3] == ["0/1", "0"]
        await pilot.press("down", "enter")  # practise beta
        await pilot.press(*keys_for(app, 0), "enter", "enter")
        assert isinstance(app.screen, ReportScreen)
        assert "| Beta — a second topic | 1 | 100% |" in text_of(app.screen, "#report")
        await pilot.press("enter")
        assert isinstance(app.screen, HomeScreen)
        assert row_text(table, "beta")[1:4] == ["1/1", "0", "100%"]


async def test_review_asks_what_is_due(make_app, clock, stored):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        assert isinstance(app.screen, HomeScreen)
        assert any("Nothing is due" in n.message for n in app._notifications)
        await pilot.press("down", "enter")
        await pilot.press(*keys_for(app, 1), "enter", "enter", "enter")  # beta, wrong
    clock.advance(days=1)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert row_text(app.screen.query_one(DataTable), "beta")[2] == "1"
        await pilot.press("r")
        assert showing(app).question.id == "beta-choice"
        assert app.screen.query_one("#question-meta").content.startswith("Review 1/1")
        await pilot.press(*keys_for(app, 0), "enter", "enter")
        assert isinstance(app.screen, ReportScreen)
    with stored() as store:
        assert [(a.mode, a.correct) for a in store.answers()] == [("practice", False), ("review", True)]


async def test_mock_round_has_a_timer_chains_follow_ups_and_reports(make_app, clock, stored):
    app = make_app(topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("m")
        assert text_of(app.screen, "#timer") == "⏱ 20:00"
        while showing(app).question.id != "alpha-numeric":
            await pilot.press("1", "enter")  # a mock round shows no feedback between questions
        await pilot.press(*"1 GiB", "enter")
        assert showing(app).question.id == "alpha-free"  # chained straight after its parent
        clock.advance(minutes=21)
        await pilot.pause(0.7)  # the timer ticks twice a second
        assert isinstance(app.screen, ReportScreen)
        report = text_of(app.screen, "#report")
        assert "**Time ran out**" in report and "*(alpha-free)*" in report
        assert "| Alpha — a small bank for the quiz app tests |" in report  # the topic's title, not its id
    with stored() as store:
        assert {a.mode for a in store.answers()} == {"mock"}


async def test_quit_mid_assessment_and_resume_it(make_app, stored):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await answer_until(app, pilot, "alpha-numeric")
        await pilot.press(*"1 GiB", "enter", "enter")
        await pilot.press(*"the variance grows with d_k", "ctrl+s")
        assert isinstance(app.screen, RubricScreen)
        await pilot.press("ctrl+q")
    assert app.return_code == 0
    with stored() as store:
        assert len(store.answers()) == 4  # every answer given before quitting is there
        [pending] = store.unassessed()
    assert pending.response == "the variance grows with d_k"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, RubricScreen)
        assert text_of(app.screen, "#learner-answer") == "the variance grows with d_k"
        await pilot.press("1", "enter")
        assert isinstance(app.screen, HomeScreen)
    with stored() as store:
        assert store.unassessed() == [] and store.answers(question_id="alpha-free")[0].score == 0.5


async def test_invalid_questions_are_skipped_with_a_warning_naming_file_and_line(make_app):
    app = make_app()
    async with app.run_test(size=SIZE):
        warnings = [n.message for n in app._notifications if n.severity == "warning"]
        assert any("beta.yaml:17: [beta-broken]" in w for w in warnings)
        assert row_text(app.screen.query_one(DataTable), "beta")[1] == "0/1"


async def test_help_theme_stats_and_quit_keys(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        help_text = app.screen.query_one(Markdown).source
        assert "**m** Mock" in help_text and "**^t** Theme" in help_text
        await pilot.press("escape")
        assert app.theme == DARK
        await pilot.press("ctrl+t")
        assert app.theme == LIGHT
        await pilot.press("s")
        assert isinstance(app.screen, StatsScreen)
        await pilot.press("escape", "ctrl+q")
    assert app.return_code == 0


async def test_question_mark_is_typed_in_answers_and_f1_opens_help(make_app):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await answer_until(app, pilot, "alpha-numeric")
        await pilot.press("question_mark")
        assert app.screen.query_one(Input).value == "?"
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)


async def test_store_notices_are_shown(make_app, db):
    Store.open(db).close()
    with closing(sqlite3.connect(db)) as raw, raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    data[100:500] = b"\xff" * 400  # a quizprep database whose first page is damaged
    db.write_bytes(bytes(data))
    app = make_app()
    async with app.run_test(size=SIZE):
        errors = [n.message for n in app._notifications if n.severity == "error"]
        assert any("moved to" in e for e in errors)


async def test_home_shows_bank_titles_as_written_not_as_markup(make_app, tmp_path):
    bank = (DATA / "beta.yaml").read_text(encoding="utf-8")
    title = next(line for line in bank.splitlines() if line.startswith("title:"))
    (tmp_path / "beta.yaml").write_text(bank.replace(title, "title: Masks [bold]and[/bold] [red]"),
                                        encoding="utf-8")
    app = make_app(banks=[tmp_path / "beta.yaml"])
    async with app.run_test(size=SIZE):
        first_row = app.screen.query_one(DataTable).render_line(1).text  # below the header
        assert "Masks [bold]and[/bold] [red]" in first_row


def test_a_database_that_cannot_be_opened_stops_the_app_with_the_reason(make_app, tmp_path, capfd):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    app = make_app(db=blocker / "progress.sqlite3")
    app.run(headless=True)
    assert app.return_code == 1
    printed = "".join("".join(capfd.readouterr()).split())  # the console wraps long paths anywhere
    assert "quizprep:cannotcreatethefolderfor" in printed and "not-a-folder/progress.sqlite3" in printed


async def test_nothing_due_says_when_the_next_review_is(make_app, clock):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*keys_for(app, 2), "enter")  # wrong: rated Again, due again in minutes
        await pilot.press("escape", "enter")
        assert isinstance(app.screen, HomeScreen)
        due = app.store.card("alpha-choice").due
        await pilot.press("r")
        minutes = round((due - clock()).total_seconds() / 60)
        assert any(f"Nothing is due for review now. Next review in {minutes} min." == n.message
                   for n in app._notifications)
