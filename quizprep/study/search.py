"""Finding questions by words and tags (`quizprep --search`, `--tag`, the app's search)."""
from __future__ import annotations

from typing import Iterable, Sequence

from quizprep.bank.model import Question


def search(questions: Iterable[Question], text: str = "", tags: Sequence[str] = ()) -> list[Question]:
    """The questions, in their order, that carry a tag starting with any of `tags` (none given:
    any question) and contain every word of `text` in their id, prompt, tags or topic. Case is
    ignored. A tag is matched by its start, so that "mem" finds "memory" and "kv" "kv-cache", as
    Anki's tag:mem* does: nobody types a whole tag, or remembers its exact spelling."""
    words = text.casefold().split()
    wanted = tuple({tag.casefold() for tag in tags})
    found = []
    for question in questions:
        if wanted and not any(tag.casefold().startswith(wanted) for tag in question.tags):
            continue
        haystack = "\n".join((question.id, question.prompt, question.topic, *question.tags)).casefold()
        if all(word in haystack for word in words):
            found.append(question)
    return found
