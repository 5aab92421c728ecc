"""Small texts of issue 21, item 11: a session summary names topics by title and questions by what
they asked (not ids), lists a question once, and says "no answers" rather than "0 % over 0
answers"; "1 free answer", not "1 free answer(s)"."""
from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from quizprep.bank.loader import load_banks
from quizprep.study.builders import practice
from quizprep.study.history import prompt_summary
from quizprep.study.store import Store
from quizprep.tui.screens.report import first_sentence, report_markdown

# this folder's banks (`conftest.DATA` is another folder's when tests of two folders run together)
DATA = Path(__file__).parent / "data"

TITLES = {"alpha": "Alpha — a small bank | for tests"}


def test_a_summary_names_topics_by_title_and_an_empty_one_says_no_answers(db, clock):
    questions = load_banks([DATA / "alpha.yaml"]).questions
    with Store.open(db) as store:
        empty = practice(store, questions, now=clock, rng=random.Random(1)).end()
        run = practice(store, questions, now=clock, rng=random.Random(1))
        run.queue = ["alpha-choice"]
        run.answer_choice(run.next(), {0})
        one = run.end()
    text = report_markdown(empty, titles=TITLES)
    assert text.startswith("## Practice: no answers in 0:00") and "0%" not in text
    assert "| Alpha — a small bank \\| for tests | 1 | 100% |" in report_markdown(one, titles=TITLES)


async def test_one_left_over_free_answer_is_one_answer_not_answers(make_app, db, clock):
    questions = load_banks([DATA / "alpha.yaml"]).questions
    with Store.open(db) as store:
        run = practice(store, questions, now=clock, rng=random.Random(1))
        run.queue = ["alpha-free"]
        run.answer_free(run.next(), "it saturates")
    app = make_app(banks=[DATA / "alpha.yaml"])
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(100):
            await pilot.pause(0.02)
            if app._notifications:
                break
        (note,) = list(app._notifications)
        assert note.message.startswith("1 free answer from last time still needs your rubric")


def test_a_requeued_question_left_unasked_is_listed_to_revisit_only(db, clock):
    questions = load_banks([DATA / "alpha.yaml"]).questions
    with Store.open(db) as store:
        run = practice(store, questions, now=clock, rng=random.Random(1))
        run.queue = ["alpha-choice"]
        run.answer_choice(run.next(), {1})  # wrong: asked again at the end
        assert run.queue == ["alpha-choice"]
        report = run.end()
    text = report_markdown(report)
    assert "### To revisit\n\n- Why is `softmax(QKᵀ/√d_k)` scaled by **1/√d_k**? *(alpha-choice)*" in text
    assert "Not answered" not in text


def test_a_question_missed_twice_is_listed_to_revisit_once(db, clock):
    questions = load_banks([DATA / "alpha.yaml"]).questions
    with Store.open(db) as store:
        run = practice(store, questions, now=clock, rng=random.Random(1))
        run.queue = ["alpha-choice"]
        run.answer_choice(run.next(), {1})
        run.answer_choice(run.next(), {1})  # asked again at the end, and missed again
        report = run.end()
    assert report_markdown(report).count("*(alpha-choice)*") == 1


def test_questions_are_named_by_what_they_asked_with_their_numbers(db, clock):
    questions = load_banks([DATA / "alpha.yaml"]).questions
    by_id = {q.id: q for q in questions}
    with Store.open(db) as store:
        run = practice(store, questions, now=clock, rng=random.Random(1))
        run.queue = ["alpha-numeric", "alpha-multi"]
        shown = run.next()
        run.skip(shown)
        report = run.end()
    text = report_markdown(report, questions=by_id)
    seq = shown.draw.values["seq"]
    assert f"- KV cache in bf16 for 32 layers, 8 KV heads of dim 128, {seq:,} tokens? *(alpha-numeric)*" in text
    assert "### Not answered\n\n- Which of these are causal-mask implementations? *(alpha-multi)*" in text


def test_a_practice_ended_early_names_the_first_ten_not_answered_and_counts_the_rest(db, clock):
    with Store.open(db) as store:
        report = practice(store, [], now=clock, rng=random.Random(1)).end()
    bank_left = tuple(f"q{number:03}" for number in range(40))  # the rest of a whole bank's queue
    text = report_markdown(dataclasses.replace(report, unanswered=bank_left))
    not_answered = text.split("### Not answered\n\n", 1)[1]
    assert [line for line in not_answered.splitlines() if line.startswith("- ")] == [f"- q{n:03}" for n in range(10)]
    assert "*…and 30 more.*" in not_answered


@pytest.mark.parametrize("prompt, first", [
    ("Dot-product attention is what Vaswani et al. (2017) scale. Why?",
     "Dot-product attention is what Vaswani et al. (2017) scale."),
    ("Mask a prefix, e.g. a system prompt, i.e. let it see itself. Then decode.",
     "Mask a prefix, e.g. a system prompt, i.e. let it see itself."),
    ("MHA vs. MQA at 3.35 TB/s and 0.5 s per step? Explain.", "MHA vs. MQA at 3.35 TB/s and 0.5 s per step?"),
    ("Which is faster, d = 64 or 128. Then say why.", "Which is faster, d = 64 or 128."),
])
def test_a_prompt_is_cut_at_its_first_sentence_not_at_an_abbreviation(prompt, first):
    assert first_sentence(prompt) == first


ABBREVIATIONS = (" al.", "e.g.", "i.e.", " vs.", " cf.", " etc.")


def test_no_shipped_prompt_is_cut_at_an_abbreviation():
    """The review's "Not answered" read "… and what Vaswani et al. (scaling-additive-vs-dot)"."""
    cut = {q.id: first_sentence(prompt_summary(q)) for q in load_banks(None).questions}
    assert len(cut) > 100
    assert {qid: text for qid, text in cut.items() if text.endswith(ABBREVIATIONS)} == {}
