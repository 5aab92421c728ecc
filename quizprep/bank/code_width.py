"""Code lines too wide for the screen. Textual's Markdown shows a fenced code block without
reflowing it like prose: a line wider than the screen was cut at its edge, and now wraps there,
mid-expression, with no indentation to say which statement the tail belongs to. Either way the
learner misreads the code a question asks about. Each such line is a warning of `quizprep check`
(an error with `--strict`), reported at the question, naming the field, the line and its length."""
from __future__ import annotations

import re
from typing import Iterable, Iterator

from quizprep.bank.model import BankError, ChoiceQuestion, FreeQuestion, Question

# A classic 80 × 24 terminal shows 74 columns of a code block, the question's margins and the
# block's padding (two columns each side) taking the rest: a 75-character line wraps there.
MAX_CODE_WIDTH = 74
# A fence opens with three or more backticks or tildes and is closed by a run of the same
# character at least as long, alone on its line (CommonMark); one left open runs to the end.
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def code_width_warnings(questions: Iterable[Question]) -> Iterator[BankError]:
    """A warning for each line of a fenced code block, in the Markdown a question shows, that is
    longer than MAX_CODE_WIDTH characters."""
    for question in questions:
        for field, text in _markdown_fields(question):
            for number, line in wide_code_lines(text):
                yield BankError(question.source.file, question.source.line, question.id,
                                f"line {number} of the {field}: a code line of {len(line)} characters, over "
                                f"{MAX_CODE_WIDTH}, wraps on an 80-column screen ({line.strip()[:40]!r}…): "
                                f"move a trailing comment to its own line above, or break the call "
                                f"across lines")


def wide_code_lines(text: str) -> Iterator[tuple[int, str]]:
    """Each line inside a fenced code block of the Markdown `text` that is longer than
    MAX_CODE_WIDTH, with its line number in `text` (from 1)."""
    fence = ""
    for number, line in enumerate(text.split("\n"), start=1):
        match = _FENCE.match(line)
        if not fence:
            fence = match.group(1) if match else ""
        elif match and match.group(1).startswith(fence) and not line[match.end():].strip():
            fence = ""
        elif len(line) > MAX_CODE_WIDTH:
            yield number, line


def _markdown_fields(question: Question) -> Iterator[tuple[str, str]]:
    """Each field of `question` shown as Markdown, named as the bank writes it."""
    yield "prompt", question.prompt
    yield "explanation", question.explanation
    if isinstance(question, ChoiceQuestion):
        for index, choice in enumerate(question.choices):
            yield f"choices[{index}].text", choice.text
            yield f"choices[{index}].why", choice.why
    elif isinstance(question, FreeQuestion):
        yield "model_answer", question.model_answer
