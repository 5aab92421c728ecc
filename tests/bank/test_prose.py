"""Typography of what the banks show, over every question of every bank: rates are FLOP/s, not
"FLOPs/s"; maths is Unicode, not LaTeX markup ("Σᵢ₌₁^{d_k}" was shown raw); a minus sign in
prose is "−" (U+2212), the ASCII hyphen being for code, in backticks or code blocks, where the
parser and Python read it. Placeholders follow the same rule: a drawn −1 is written "−1"."""
from __future__ import annotations

import re
from typing import Iterator

import pytest

from quizprep.bank import ChoiceQuestion, FreeQuestion, NumericQuestion, Question, load_banks
from quizprep.bank.numeric import Draw, draw, fill_placeholders, fill_template

RESULT = load_banks()
NUMERIC = [q for q in RESULT.questions if isinstance(q, NumericQuestion)]

_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
# A hyphen where a minus sign belongs: before a number or infinity, at the start of a word
# ("x = -1", "(-inf"), not inside one ("FlashAttention-1", "size-1", "e^(x−m)").
ASCII_MINUS = re.compile(r"(?:^|(?<=[\s(]))-(?=\d|\.\d|inf\b|∞)")
FLOP_RATE = re.compile(r"\b[kMGTPE]?FLOPs/s\b")
MARKUP = re.compile(r"\^\{|[Σ∑∏]_\{|\\(?:frac|sqrt|sum|prod|cdot|times|mathrm|text|left|right)\b")


def shown_texts(question: Question) -> Iterator[tuple[str, str]]:
    """(field, text) for everything a learner reads of `question`."""
    yield "prompt", question.prompt
    yield "explanation", question.explanation
    yield from (("pitfalls", text) for text in question.pitfalls)
    yield from (("follow_ups", text) for text in question.follow_ups)
    if isinstance(question, ChoiceQuestion):
        for choice in question.choices:
            yield "choice text", choice.text
            yield "choice why", choice.why
    elif isinstance(question, NumericQuestion):
        yield from (("wrong answer message", wrong.message) for wrong in question.wrong_answers)
    elif isinstance(question, FreeQuestion):
        yield "model_answer", question.model_answer
        yield from (("rubric criterion", item.criterion) for item in question.rubric)


def prose(text: str) -> str:
    """`text` without its code: fenced blocks and `spans` become spaces."""
    return _CODE_SPAN.sub(" ", _FENCE.sub(" ", text))


def findings(pattern: re.Pattern[str], questions: list[Question]) -> list[str]:
    return [f"{q.id} ({field}): …{text[max(0, m.start() - 30):m.end() + 20]}…"
            for q in questions for field, whole in shown_texts(q)
            for text in [prose(whole)] for m in pattern.finditer(text)]


def test_flop_rates_are_written_flop_per_second() -> None:
    assert findings(FLOP_RATE, RESULT.questions) == []


def test_no_latex_markup_is_shown() -> None:
    assert findings(MARKUP, RESULT.questions) == []


def test_prose_writes_minus_signs_not_hyphens() -> None:
    assert findings(ASCII_MINUS, RESULT.questions) == []


def test_the_checks_see_each_kind_of_slip() -> None:
    # Each pattern finds what it is for, outside code, and leaves code and hyphenated words alone.
    assert FLOP_RATE.search("312 TFLOPs/s") and not FLOP_RATE.search("312 TFLOP/s, 2 FLOPs per MAC")
    assert MARKUP.search("Σᵢ₌₁^{d_k} qᵢkᵢ") and MARKUP.search("S_t = Σ_{j≤t} kⱼ") and not MARKUP.search("S_{t−1}")
    for slip in ("x = -1", "scores of -inf", "(-0.5, 2)", "-3 to 4"):
        assert ASCII_MINUS.search(prose(slip)), slip
    for fine in ("x = −1", "FlashAttention-1", "size-1 heads", "`dim=-1`", "```python\nx[:-1]\n```", "e^(x−m)"):
        assert not ASCII_MINUS.search(prose(fine)), fine


def test_a_negative_placeholder_is_written_with_a_minus_sign() -> None:
    assert fill_placeholders("x = {{x}}, m = {{m}}", Draw(0, {"x": -1, "m": 2.5})) == "x = −1, m = 2.5"


@pytest.mark.parametrize("question", NUMERIC, ids=lambda q: q.id)
def test_drawn_numbers_in_prose_carry_minus_signs(question: NumericQuestion) -> None:
    texts = [question.prompt, question.explanation] + [wrong.message for wrong in question.wrong_answers]
    rendered = [fill_placeholders(text, draw(question, seed)) for seed in range(20) for text in texts]
    rendered += [fill_template(text, question) for text in texts]
    assert [text for text in rendered if ASCII_MINUS.search(prose(text))] == []
