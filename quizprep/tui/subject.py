"""Which question the learner is looking at, for the keys that act on it (h history, Ctrl+F
flag). Found by what a screen holds, so the start-up imports no screen module for it."""
from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import Screen

from quizprep.study.overview import TopicStats, short_title

if TYPE_CHECKING:
    from quizprep.bank.model import Question


def shown_question(screen: Screen) -> Question | None:
    """The question on a question screen or on the feedback about its answer."""
    showing = getattr(screen, "showing", None) or getattr(getattr(screen, "feedback", None), "showing", None)
    return getattr(showing, "question", None)


def has_history_subject(screen: Screen) -> bool:
    """Whether `history_subject` finds something on `screen`, known without the questions."""
    return shown_question(screen) is not None or _current_topic(screen) is not None


def _current_topic(screen: Screen) -> TopicStats | None:
    return getattr(screen, "current_topic", lambda: None)()


def history_subject(screen: Screen, questions: list[Question]) -> tuple[list[Question], str] | None:
    """The questions whose history `h` shows, and a title: the question shown, or on Home every
    question of the topic under the cursor (with the topic's short title)."""
    question = shown_question(screen)
    if question is not None:
        return [question], question.id
    topic = _current_topic(screen)
    if topic is None:
        return None
    # The title as Home's table shows it: the heading is one row, which a whole title overran
    # at 80 columns, cutting "times in UTC".
    return [q for q in questions if q.topic == topic.topic], short_title(topic.title)
