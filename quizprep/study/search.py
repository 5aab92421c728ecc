"""Finding questions by words and tags (`quizprep --search`, `--tag`, the app's search)."""
from __future__ import annotations

from typing import Iterable, Sequence

from quizprep.bank.model import Question


def search(questions: Iterable[Question], text: str = "", tags: Sequence[str] = ()) -> list[Question]:
    """The questions, in their order, that carry any of `tags` (none given: any question) and
    contain every word of `text` in their id, prompt, tags or topic. Case is ignored."""
    words = text.casefold().split()
    wanted = {tag.casefold() for tag in tags}
    found = []
    for question in questions:
        own_tags = {tag.casefold() for tag in question.tags}
        if wanted and not wanted & own_tags:
            continue
        haystack = "\n".join((question.id, question.prompt, question.topic, *question.tags)).casefold()
        if all(word in haystack for word in words):
            found.append(question)
    return found
