"""Flag a question as wrong (issue 13, item 7): Ctrl+F on a question or its feedback asks why
and appends it to flagged-questions.md beside the progress database."""
from __future__ import annotations

from choices import keys_for
from free_answers import footer_text
from quizprep.tui.screens.feedback import FeedbackScreen
from quizprep.tui.screens.flag import FlagScreen
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.question import QuestionScreen

SIZE = (80, 24)


async def test_ctrl_f_writes_the_reason_beside_the_database_and_says_where(make_app, db):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+f")
        assert isinstance(app.screen, FlagScreen)
        await pilot.press(*"choice 3 is right too", "enter")
        assert isinstance(app.screen, QuestionScreen)
        flags = db.with_name("flagged-questions.md")
        assert any(f"alpha-choice flagged in {flags}" in n.message for n in app._notifications)
        await pilot.press(*keys_for(app, 0), "enter", "ctrl+f")
        assert isinstance(app.screen, FlagScreen)
        await pilot.press(*"the explanation skips a step", "enter")
        assert isinstance(app.screen, FeedbackScreen)
    text = flags.read_text(encoding="utf-8")
    assert text.count("## alpha-choice (") == 2 and "alpha.yaml:" in text
    assert "> choice 3 is right too" in text and "> the explanation skips a step" in text


async def test_an_empty_reason_is_refused_and_esc_writes_nothing(make_app, db):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+f", "enter")
        assert isinstance(app.screen, FlagScreen)
        assert any("Say what is wrong" in n.message for n in app._notifications)
        await pilot.press("escape")
        assert isinstance(app.screen, QuestionScreen)
    assert not db.with_name("flagged-questions.md").exists()


async def test_home_has_no_question_to_flag(make_app, db):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+f")
        assert isinstance(app.screen, HomeScreen)
    assert not db.with_name("flagged-questions.md").exists()


async def test_help_on_a_question_lists_flag_and_history(make_app):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        keys = app.screen.query_one("Markdown").source.split("### Answering")[0]
        assert "**^f** Flag" in keys and "**h** History" in keys and "**^g** Don't know" in keys


async def test_the_flag_dialog_shows_its_own_keys_not_the_questions(make_app):
    app = make_app(mode="practice", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+f")
        await pilot.pause()
        bottom = footer_text(app)
        assert "esc Cancel" in bottom and "End session" not in bottom, bottom
