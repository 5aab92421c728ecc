"""A noun a placeholder counts is written in the singular or plural its number asks for, "1 KV
head", "8 KV heads", never "head(s)" (issue 32, item 10), as drawn and in history's templates."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from quizprep.bank import NumericQuestion, load_banks
from quizprep.bank.numeric import Draw, draw, fill_placeholders, fill_template

SHIPPED = Path(__file__).parents[2] / "questions"
SAMPLE = Path(__file__).parent / "data" / "valid.yaml"
LEFT_AS_WRITTEN = re.compile(r"[A-Za-z]{2,}\(s\)")  # "head(s)", not the math of "f(s)"


@pytest.mark.parametrize(("kv", "written"), [(1, "1 KV head of 128"), (8, "8 KV heads of 128")])
def test_a_counted_noun_agrees_with_its_number(kv, written):
    values = {"kv": kv, "n": 1, "b": 2}
    text = fill_placeholders("{{kv}} KV head(s) of 128, {{n}} key(s),\n{{ b }} byte(s)\nper element", Draw(1, values))
    assert text == f"{written}, 1 key,\n2 bytes\nper element"


def test_a_noun_two_words_after_its_number_is_left_alone():
    assert fill_placeholders("{{n}} of the head(s)", Draw(1, {"n": 1})) == "1 of the head(s)"


def test_a_template_counts_in_the_plural_over_the_values_drawn():
    question = next(q for q in load_banks([SAMPLE]).questions if isinstance(q, NumericQuestion))
    assert fill_template("{{layers}} layer(s), {{batch}} sequence(s)", question) == "32 layers, 1 to 4 sequences"


def shipped_numeric() -> list[NumericQuestion]:
    return [q for q in load_banks([SHIPPED]).questions if isinstance(q, NumericQuestion)]


def test_no_shipped_prompt_shows_a_noun_with_s_in_brackets():
    for question in shipped_numeric():
        for seed in range(1, 9):
            assert not LEFT_AS_WRITTEN.search(fill_placeholders(question.prompt, draw(question, seed))), question.id
        assert not LEFT_AS_WRITTEN.search(fill_template(question.prompt, question)), question.id
