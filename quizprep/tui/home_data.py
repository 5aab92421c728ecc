"""What Home shows, gathered from the app's store, banks and search: the topics' counts, the
forecast when an interview date is set, and the graded exercises."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from quizprep.study.overview import TopicStats, topic_overview
from quizprep.study.store import StoreError
from quizprep.tui.screens.home import HomeView

if TYPE_CHECKING:
    from quizprep.bank.model import Question
    from quizprep.bank.summary import QuestionRef
    from quizprep.study.grades import ExerciseStatus
    from quizprep.study.interview import Forecast
    from quizprep.tui.app import QuizApp


def home_view(app: QuizApp) -> HomeView:
    if app.store is None:
        return HomeView([])
    # The forecast's module is loaded only when a date is set: not on a usual start.
    forecast = app.forecast() if app.interview else None
    return HomeView(_overview(app), forecast, _exercises(app))


def _overview(app: QuizApp) -> list[TopicStats]:
    """Each topic's counts; under --topic only its topics: the others' history (a topic studied
    before) listed them as "0/0 0 100%", and `p` on one said it had no questions."""
    assert app.store is not None
    try:
        topics = topic_overview(app.store, _counted(app), now=app.now(), titles=app.summary.titles,
                                filtered=bool(app.search_text or app.tags))
    except StoreError as error:
        app.store_problem(error)
        return []
    wanted = app.options.topics
    return [stats for stats in topics if not wanted or stats.topic in wanted]


def _counted(app: QuizApp) -> Sequence[Question | QuestionRef]:
    """The questions Home counts: with a search, those matching it; else those in --topic's
    topics, by the summary (the same ids and topics as the full banks', in the same order)."""
    return app.questions if app.search_text or app.tags else app.in_topics(app.summary.questions)


def _exercises(app: QuizApp) -> list[ExerciseStatus]:
    from quizprep.study.grades import exercise_statuses

    assert app.store is not None
    try:
        return exercise_statuses(app.store)
    except StoreError:  # the topics still show; the overview reports store problems
        return []


def remember_interview(app: QuizApp) -> None:
    """Save a date given on the command line; without one, use the date saved last time."""
    assert app.store is not None
    if app.interview is None and app.store.setting("interview") is None:
        return  # the usual start: no need to load the forecast's module
    from quizprep.study import interview

    if app.interview is not None:
        interview.save_date(app.store, app.interview)
    else:
        app.interview = interview.saved_date(app.store, app.now().astimezone(app.tz).date())


def forecast(app: QuizApp) -> Forecast | None:
    """Predicted recall per topic on the interview date (its morning and the days left counted
    in the learner's time zone); None when no date is set."""
    from quizprep.study.interview import forecast as forecast_on

    if app.interview is None or app.store is None:
        return None
    return forecast_on(app.store, app.questions, app.interview, app.now().astimezone(app.tz),
                       app.loaded.titles())
