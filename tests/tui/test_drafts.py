"""A free or numeric answer being typed is saved as a draft and comes back with its question:
after Esc, after Ctrl+Q, after kill -9. Leaving with a draft asks first."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from quizprep.tui.screens.confirm import ConfirmScreen
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.question import DRAFT_DELAY_S, QuestionScreen
from quizprep.tui.widgets.free_answer import FreeAnswer

SIZE = (80, 24)
DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parents[2]
FREE_TEXT = "q.k has variance d_k"


async def on_question(app, pilot) -> None:
    """Wait for the session's first question: the app opens on Home and starts it from there."""
    while not isinstance(app.screen, QuestionScreen):
        await pilot.pause()


async def text_on_reopening(make_app, question_id: str, *typed: str) -> str:
    """The answer field's text when the question is opened again, as the next run would, and
    `typed` is typed on."""
    app = make_app(question=question_id)
    async with app.run_test(size=SIZE) as pilot:
        await on_question(app, pilot)
        await pilot.press(*typed)
        return app.screen.query_one("#answer").text


async def test_esc_with_a_draft_asks_and_the_draft_comes_back(make_app, stored):
    app = make_app(question="alpha-free")
    async with app.run_test(size=SIZE) as pilot:
        await on_question(app, pilot)
        await pilot.press(*"half an answer")
        await pilot.press("escape")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # keep going: nothing lost, still on the question
        assert app.screen.query_one(FreeAnswer).text == "half an answer"
        await pilot.press("escape", "y")
        assert not isinstance(app.screen, QuestionScreen)
    assert await text_on_reopening(make_app, "alpha-free") == "half an answer"


async def test_esc_without_a_draft_leaves_at_once(make_app):
    app = make_app(question="alpha-free")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape")
        await pilot.press("enter")  # the report
        assert isinstance(app.screen, HomeScreen)


async def test_ctrl_q_with_a_numeric_draft_asks_then_keeps_it(make_app, stored):
    app = make_app(question="alpha-numeric")
    async with app.run_test(size=SIZE) as pilot:
        await on_question(app, pilot)
        await pilot.press(*"32 Gi")
        await pilot.press("ctrl+q")
        assert isinstance(app.screen, ConfirmScreen)
        assert app.screen.question.startswith("Quit quizprep?") and app.screen.yes == "Quit"  # not "End the session?"
        await pilot.press("y")
    assert await text_on_reopening(make_app, "alpha-numeric") == "32 Gi"
    assert await text_on_reopening(make_app, "alpha-numeric", "B") == "32 GiB"  # typed on, not over


async def test_a_draft_is_saved_while_typing_and_dropped_once_answered(make_app, stored, db):
    app = make_app(question="alpha-free")
    async with app.run_test(size=SIZE) as pilot:
        await on_question(app, pilot)
        await pilot.press(*FREE_TEXT)
        await pilot.pause(DRAFT_DELAY_S + 0.3)
        with stored() as store:
            assert store.draft("alpha-free") == FREE_TEXT  # on disk, the app still running
        await pilot.press("ctrl+s")
    with stored() as store:
        assert store.draft("alpha-free") == ""
        assert [a.response for a in store.answers()] == [FREE_TEXT]


KILLED_MID_DRAFT = textwrap.dedent(f"""
    import asyncio, os, signal, sys
    from datetime import timezone
    from quizprep.tui.app import QuizApp
    from quizprep.tui.options import QuizOptions

    async def main():
        options = QuizOptions(banks=[sys.argv[1]], db=sys.argv[2], question="alpha-free")
        app = QuizApp(options, tz=timezone.utc, seed=7)
        async with app.run_test(size=(80, 24)) as pilot:
            while type(app.screen).__name__ != "QuestionScreen":
                await pilot.pause()
            await pilot.press(*{FREE_TEXT!r})
            await pilot.pause({DRAFT_DELAY_S} + 0.5)
            os.kill(os.getpid(), signal.SIGKILL)

    asyncio.run(main())
""")


def test_kill_9_mid_draft_keeps_the_text(tmp_path, stored, db):
    # ahead of, not instead of, the caller's path (where the app's dependencies may live)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    run = subprocess.run([sys.executable, "-c", KILLED_MID_DRAFT, str(DATA), str(db)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == -signal.SIGKILL, run.stderr
    with stored() as store:
        assert store.draft("alpha-free") == FREE_TEXT


async def test_ctrl_q_in_a_mock_round_asks_before_quitting(make_app):
    app = make_app(mode="mock", topics=["alpha"])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+q")
        assert isinstance(app.screen, ConfirmScreen) and app.screen.question.startswith("Quit quizprep?")
        await pilot.press("n")
        assert not isinstance(app.screen, ConfirmScreen) and app.return_code is None
        await pilot.press("ctrl+q", "y")
    assert app.return_code == 0


async def test_typing_on_a_restored_draft_adds_to_its_end(make_app):
    """Issue 32, item 6: the cursor was put at the start of a restored free answer."""
    app = make_app(question="alpha-free")
    async with app.run_test(size=SIZE) as pilot:
        await on_question(app, pilot)
        await pilot.press(*"two lines", "enter", *"of answer")
        await pilot.press("escape", "y")
    assert await text_on_reopening(make_app, "alpha-free", *" and more") == "two lines\nof answer and more"
