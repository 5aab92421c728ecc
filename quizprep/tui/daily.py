"""The quiz app's side of the daily limits (quizprep.study.limits): saving those given on the
command line, what they leave today, and saying why a session has nothing to ask."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Sequence

from quizprep.study.limits import Allowance, allowance as allowance_on, read_limits, save_limits

if TYPE_CHECKING:
    from quizprep.tui.app import QuizApp


def save_given_limits(app: QuizApp) -> None:
    """Save the limits given on the command line; the other one stays as saved."""
    assert app.store is not None
    save_limits(app.store, replace(read_limits(app.store), **app.daily_limits))


def allowance(app: QuizApp) -> Allowance | None:
    """What today's limits leave, counted in the app's time zone; None without limits."""
    assert app.store is not None
    limits = read_limits(app.store)
    return allowance_on(app.store, limits, app.now(), app.tz) if limits.set else None


def nothing_to_do(app: QuizApp, mode: str, topics: Sequence[str]) -> str:
    """Why a session of `mode` has nothing to ask, and when the next review is. Practice is
    only ever empty under daily limits (interview practice has none: it is deadline-driven)."""
    daily = app.allowance() if mode == "review" or (mode == "practice" and app.interview is None) else None
    if mode != "review" and daily is None:
        return "No questions to ask."
    from quizprep.study.builders import next_due
    from quizprep.tui.screens.feedback import due_phrase

    assert app.store is not None
    wanted = set(topics or app.topics)
    due = next_due(app.store, [q for q in app.questions if not wanted or q.topic in wanted])
    reached = daily.reached() if daily is not None else None
    if daily is not None:
        due = daily.next_review(due)
    head = f"{reached[0].upper()}{reached[1:]} is reached." if reached else "Nothing is due for review now."
    later = f" Next review {due_phrase(due, app.now())}." if due is not None else ""
    return f"{head}{later}"
