"""The two topics of issue 22 item 3 ship, load cleanly, reach Home's topic list, and each has
every kind of question: single and select-all choices, parameterised numbers, free responses."""
from __future__ import annotations

import pytest

from quizprep.bank import ChoiceQuestion, FreeQuestion, NumericQuestion, load_banks
from quizprep.bank.loader import default_bank_dir
from quizprep.study.overview import topic_overview
from quizprep.study.store import Store

NEW_TOPICS = {"beyond_softmax": "beyond_softmax.yaml", "kv_shrink": "kv_shrink.yaml"}


@pytest.fixture(scope="module")
def shipped():
    result = load_banks()
    assert [str(error) for error in result.errors] == []
    return result


@pytest.mark.parametrize("topic", sorted(NEW_TOPICS))
def test_topic_has_fifteen_questions_of_every_kind(shipped, topic: str) -> None:
    questions = [q for q in shipped.questions if q.topic == topic]
    assert len(questions) >= 15
    choices = [q for q in questions if isinstance(q, ChoiceQuestion)]
    assert any(not q.multiple for q in choices) and any(q.multiple for q in choices)
    assert any("code-reading" in q.tags for q in choices)
    numeric = [q for q in questions if isinstance(q, NumericQuestion)]
    assert numeric and all(q.generated and q.wrong_answers for q in numeric)
    assert any(isinstance(q, FreeQuestion) and len(q.rubric) >= 3 for q in questions)
    assert all(q.source.file.endswith(NEW_TOPICS[topic]) for q in questions)


def test_home_lists_the_new_topics_with_their_titles(shipped, tmp_path) -> None:
    assert all((default_bank_dir() / name).is_file() for name in NEW_TOPICS.values())
    with Store.open(tmp_path / "progress.sqlite3") as store:
        rows = {row.topic: row for row in topic_overview(store, shipped.questions, titles=shipped.titles())}
    assert rows["beyond_softmax"].title.startswith("Beyond softmax attention")
    assert rows["kv_shrink"].title.startswith("Shrinking the KV cache")
    assert rows["beyond_softmax"].questions >= 15 and rows["kv_shrink"].questions >= 15
