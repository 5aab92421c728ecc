"""`--interview` and `--cram` in the app: the date is kept, forecast and sessions follow it."""
from __future__ import annotations

from datetime import date, timedelta

from fsrs import Rating

from quizprep.study.store import Store
from quizprep.tui.screens.question import QuestionScreen

INTERVIEW = date(2025, 3, 20)  # 10 days after the conftest clock's start


def answered_yesterday(path, clock, question_id: str, right: bool) -> None:
    with Store.open(path) as store:
        store.record_answer(question_id=question_id, topic="alpha", kind="choice", mode="practice",
                            response="1", elapsed_s=3.0, answered_at=clock() - timedelta(days=1), correct=right,
                            score=float(right), rating=Rating.Good if right else Rating.Again)


async def test_the_interview_date_is_kept_and_forecast(make_app, tmp_path):
    app = make_app(interview=INTERVIEW)
    async with app.run_test(size=(80, 24)):
        assert app.forecast().days_left == 10 and app.forecast().on == INTERVIEW
    later = make_app()
    async with later.run_test(size=(80, 24)):
        assert later.interview == INTERVIEW
        assert {t.topic for t in later.forecast().topics} == {"alpha", "beta"}
    without = make_app(db=tmp_path / "other.sqlite3")
    async with without.run_test(size=(80, 24)):
        assert without.forecast() is None


async def test_practice_before_an_interview_asks_what_would_be_forgotten_first(make_app, clock, tmp_path):
    for interview, first in ((None, "alpha-multi"), (INTERVIEW, "beta-choice")):
        db = tmp_path / f"{first}.sqlite3"
        answered_yesterday(db, clock, "alpha-choice", True)
        answered_yesterday(db, clock, "alpha-multi", False)  # due now: plain practice asks it first
        app = make_app(mode="practice", interview=interview, db=db)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, QuestionScreen)
            assert app.screen.showing.question.id == first  # with a date: never answered, easiest, first


async def test_cram_records_answers_without_scheduling(make_app, stored):
    app = make_app(mode="cram")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen) and app.screen.session.mode == "cram"
        app.screen.session.skip(app.screen.showing)
    with stored() as store:
        assert [(a.mode, a.rating) for a in store.answers()] == [("cram", None)] and store.cards() == {}


async def test_cram_feedback_says_the_schedule_is_left_alone(make_app):
    """Issue 32, item 8: it said "Rated Good; next review in 1 min" and moved nothing."""
    from quizprep.tui.screens.feedback import CRAM_LEAVES_SCHEDULE, FeedbackScreen

    app = make_app(mode="cram")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+g")
        assert isinstance(app.screen, FeedbackScreen)
        shown = app.screen.query_one("#feedback").source + str(app.screen.query_one("#review-line").content)
        assert CRAM_LEAVES_SCHEDULE in shown and "next review" not in shown


async def test_practice_and_forecast_count_recall_at_the_same_moment(make_app, monkeypatch):
    """The interview's morning in the learner's zone, for Home's forecast and the session alike."""
    from datetime import timezone

    from quizprep.study import interview

    moments = []
    real = interview.predicted_recall

    def recording(store, questions, at):
        moments.append(at)
        return real(store, questions, at)

    monkeypatch.setattr(interview, "predicted_recall", recording)
    app = make_app(mode="practice", interview=INTERVIEW, tz=timezone(timedelta(hours=-10)))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen)
        app.forecast()
    assert len(set(moments)) == 1 and len(moments) >= 2
    assert moments[0].hour == 9 and moments[0].utcoffset() == timedelta(hours=-10)
