"""The quiz app's side of the daily limits (quizprep.study.limits): saving those given on the
command line, what they leave today, and saying why a session has nothing to ask."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Mapping, Sequence

from quizprep.study.limits import Allowance, allowance as allowance_on, read_limits, save_limits
from quizprep.study.store import Store

if TYPE_CHECKING:
    from quizprep.bank.model import Question


def save_given_limits(store: Store, given: Mapping[str, int | None]) -> None:
    """Save the limits given on the command line ("new", "reviews"); the other one stays as saved."""
    save_limits(store, replace(read_limits(store), **given))


def allowance(store: Store, now: datetime, zone: tzinfo | None) -> Allowance | None:
    """What today's limits leave, counted in the time zone `zone`; None without limits."""
    limits = read_limits(store)
    return allowance_on(store, limits, now, zone) if limits.set else None


def nothing_to_do(store: Store, mode: str, questions: Sequence[Question], daily: Allowance | None,
                  now: datetime) -> str:
    """Why a session of `mode` on `questions` has nothing to ask, and when the next review is.
    `daily` is what the daily limits left it, None when they did not apply."""
    if mode != "review" and daily is None:
        return "No questions to ask."
    from quizprep.study.builders import next_due
    from quizprep.tui.screens.feedback import due_phrase

    due = next_due(store, questions)
    reached = daily.reached(mode) if daily is not None else None
    if daily is not None:
        due = daily.next_review(due)
    head = f"{reached[0].upper()}{reached[1:]} is reached." if reached else "Nothing is due for review now."
    later = f" Next review {due_phrase(due, now)}." if due is not None else ""
    return f"{head}{later}"
