"""Choosing the session and mock length on Home (issue 13, item 7): `l` steps through lengths,
Home says which, and practice, review and mock sessions are built with it."""
from __future__ import annotations

from pathlib import Path

from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.question import QuestionScreen

SIZE = (80, 24)


def many_questions(folder: Path, count: int = 12) -> Path:
    questions = "".join(f"""
  - id: delta-{n}
    kind: choice
    difficulty: 1
    tags: []
    prompt: Question {n}?
    explanation: Because.
    references: ["none"]
    choices:
      - text: "yes {n}"
        correct: true
        why: It is.
      - text: "no {n}"
        why: It is not.
""" for n in range(count))
    bank = folder / "delta.yaml"
    bank.write_text(f"topic: delta\ntitle: Delta\nquestions:{questions}", encoding="utf-8")
    return bank


def summary(app) -> str:
    return str(app.screen.query_one("#home-summary").content)


async def test_l_chooses_the_length_of_practice_and_mock_sessions(make_app, tmp_path):
    app = make_app(banks=[many_questions(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        assert "all per session, mock 8 in 20:00" in summary(app)
        await pilot.press("l")
        assert "5 per session, mock 5 in 12:30" in summary(app)
        await pilot.press("a")
        assert isinstance(app.screen, QuestionScreen)
        assert str(app.screen.query_one("#question-meta").content).startswith("Practice 1/5 ")
        await pilot.press("escape", "enter")
        assert isinstance(app.screen, HomeScreen)
        await pilot.press("l")
        assert "10 per session, mock 10 in 25:00" in summary(app)
        await pilot.press("m")
        assert str(app.screen.query_one("#question-meta").content).startswith("Mock interview 1/10 ")
        assert str(app.screen.query_one("#timer").content) == "⏱ 25:00"


async def test_the_command_lines_length_is_shown_and_stepping_goes_round_to_every_question(make_app, tmp_path):
    app = make_app(banks=[many_questions(tmp_path)], length=7, minutes=30)
    async with app.run_test(size=SIZE) as pilot:
        assert "7 per session, mock 7 in 30:00" in summary(app)
        for _ in range(3):  # 10, 20, 40
            await pilot.press("l")
        assert "40 per session" in summary(app)
        await pilot.press("l")
        assert "all per session, mock 8 in 30:00" in summary(app)
        await pilot.press("a")
        assert str(app.screen.query_one("#question-meta").content).startswith("Practice 1/12 ")


async def test_the_length_chosen_with_l_is_kept_for_later_runs(make_app, tmp_path):
    bank = many_questions(tmp_path)
    app = make_app(banks=[bank])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("l")
        assert "5 per session" in summary(app)
    later = make_app(banks=[bank])
    async with later.run_test(size=SIZE) as pilot:
        assert "5 per session" in summary(later)
        await pilot.press("a")
        assert str(later.screen.query_one("#question-meta").content).startswith("Practice 1/5 ")
    given = make_app(banks=[bank], length=7)  # the command line's wins for its run
    async with given.run_test(size=SIZE):
        assert "7 per session" in summary(given)


async def test_interview_practice_without_a_length_asks_a_sessions_worth(make_app, tmp_path, monkeypatch):
    from datetime import date

    from quizprep.study import lengths

    monkeypatch.setattr(lengths, "INTERVIEW_QUESTIONS", 3)
    app = make_app(banks=[many_questions(tmp_path)], mode="practice", interview=date(2025, 4, 1))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert str(app.screen.query_one("#question-meta").content).startswith("Practice 1/3 ")


async def test_home_names_what_interview_practice_asks_without_a_length(make_app, tmp_path):
    """With an interview date `a` asks a session's worth, not every question as Home said."""
    from datetime import date

    from quizprep.study.lengths import INTERVIEW_QUESTIONS

    app = make_app(banks=[many_questions(tmp_path, count=INTERVIEW_QUESTIONS + 2)], interview=date(2025, 4, 1))
    async with app.run_test(size=SIZE) as pilot:
        assert f"{INTERVIEW_QUESTIONS} per session, mock 8 in 20:00" in summary(app)
        await pilot.press("a")
        assert str(app.screen.query_one("#question-meta").content).startswith(f"Practice 1/{INTERVIEW_QUESTIONS} ")
