"""The bank model's classes are values: immutable, hashable and equal by content (issue 32 made
most of them NamedTuples, defined faster at start than frozen dataclasses; this is what they keep).
The shipped banks, read through the cache as the quiz app reads them, cover every class."""
from __future__ import annotations

import dataclasses
import pickle

import pytest

from quizprep.bank import load_banks
from quizprep.bank.model import ChoiceQuestion, FreeQuestion, NumericQuestion, Source


@pytest.fixture(scope="module")
def questions(tmp_path_factory: pytest.TempPathFactory) -> list:
    cache = tmp_path_factory.mktemp("cache")
    load_banks(cache_dir=cache)  # validated, then cached
    return load_banks(cache_dir=cache).questions  # read back from the cache


def parts(question) -> list:
    """The question's own values (its source, choices, parameters, tolerance, rubric...)."""
    found = [question.source]
    if isinstance(question, ChoiceQuestion):
        found += question.choices
    elif isinstance(question, NumericQuestion):
        found += [*question.params, *question.wrong_answers, question.tolerance]
    elif isinstance(question, FreeQuestion):
        found += question.rubric
    return found


def test_questions_and_their_parts_are_immutable(questions) -> None:
    for question in questions:
        with pytest.raises(dataclasses.FrozenInstanceError):
            question.prompt = "changed"  # type: ignore[misc]
        for part in parts(question):
            with pytest.raises(AttributeError):
                part.__setattr__(type(part)._fields[0], "changed")


def test_questions_are_equal_by_content_whatever_file_they_came_from(questions) -> None:
    for question in questions:
        moved = dataclasses.replace(question, source=Source("elsewhere.yaml", 1))
        assert moved == question and hash(moved) == hash(question)
        assert dataclasses.replace(question, prompt=question.prompt + "!") != question
        assert {question: 1}[pickle.loads(pickle.dumps(question))] == 1
        assert repr(question).startswith(f"{type(question).__name__}(id={question.id!r}")


def test_a_part_equals_a_copy_and_not_a_changed_one(questions) -> None:
    for part in (part for question in questions for part in parts(question)):
        assert part == type(part)(*part) and hash(part) == hash(type(part)(*part))
        assert part != part._replace(**{part._fields[0]: "changed"})
