"""The shipped-bank fixes of issue 22 that `check --strict` cannot see by itself: slips that are now
listed as wrong answers (so the strict check proves them outside the tolerance in every draw),
prompts that no longer state their own answer, a predecessor that no longer gives half of its
follower's answer, and worked solutions that print signs and sizes readably."""
from __future__ import annotations

import math

import pytest

from quizprep.bank import ChoiceQuestion, NumericQuestion, load_banks
from quizprep.bank.audit import audited_draws, tolerance_leaks
from quizprep.bank.cues import predecessor_text, stated_numbers
from quizprep.bank.numeric import Draw, draw, expected_text, worked_steps

RESULT = load_banks()
BY_ID = {question.id: question for question in RESULT.questions}


@pytest.mark.parametrize(("question_id", "slip"), [
    # a KV head split across GPUs (past tp = G each GPU keeps a whole one)
    ("gqa-tp-kv-per-gpu", "per_kv_head * kv_heads / tp if tp > kv_heads else per_kv_head * kv_heads"),
    ("kv-cache-paged-blocks", "tokens * per_token"),  # not rounded up to whole blocks
    ("kv-cache-no-cache-passes", "g * p + g * (g + 1) / 2"),  # one step too many
])
def test_the_slip_is_listed_and_outside_the_tolerance_in_every_draw(question_id: str, slip: str) -> None:
    question = BY_ID[question_id]
    assert isinstance(question, NumericQuestion)
    assert slip in [wrong.formula.source for wrong in question.wrong_answers]
    evaluated = audited_draws([question])
    assert len(evaluated[question_id]) == min(2000, math.prod(len(p.values) for p in question.params))
    assert list(tolerance_leaks([question], evaluated)) == []


def test_training_six_n_t_writes_no_answer_of_its_own_as_the_example() -> None:
    question = BY_ID["training-six-n-t"]
    assert isinstance(question, NumericQuestion)
    written = [number for number, _ in stated_numbers(question.prompt)]
    answers = [float(env["answer"]) for env in audited_draws([question])[question.id]]
    assert not [n for n in written for answer in answers if question.tolerance.accepts(n, answer)]


def test_the_stall_question_no_longer_prints_what_the_accumulation_snippet_prints() -> None:
    predecessor, follower = BY_ID["numerics-count-stall"], BY_ID["numerics-accumulate-code"]
    assert isinstance(follower, ChoiceQuestion)
    [correct] = [choice.text for choice in follower.choices if choice.correct]
    printed = {number for number, _ in stated_numbers(correct)}
    assert printed and not printed & {number for number, _ in stated_numbers(predecessor_text(predecessor))}


@pytest.mark.parametrize("question_id", ["softmax-online-rescale", "serving-merge-partials", "flash-online-output"])
def test_worked_solutions_put_negative_numbers_in_brackets(question_id: str) -> None:
    question = BY_ID[question_id]
    assert isinstance(question, NumericQuestion)
    negative_seen = False
    for seed in range(40):
        shown = draw(question, seed)
        negative_seen |= any(isinstance(v, (int, float)) and v < 0 for v in shown.values.values())
        for line in worked_steps(question, shown):
            assert "+ -" not in line and "× -" not in line and "− -" not in line, line
            assert "+ −" not in line.replace("+ (−", ""), line
    assert negative_seen


def test_training_compute_reads_in_flops_not_in_scientific_petaflops() -> None:
    question = BY_ID["training-six-n-t"]
    assert isinstance(question, NumericQuestion)
    values = {"n_billion": 70, "t_trillion": 15, "n": 70e9, "tokens": 15e12, "answer": 6 * 70e9 * 15e12}
    assert expected_text(question, Draw(0, values)) == "6.3e+24 FLOP"


def test_every_shipped_numeric_question_is_audited_over_all_its_draws() -> None:
    # Each file stays well within the audit's work budget: no question gets a reduced sample.
    evaluated = audited_draws(RESULT.questions)
    short = [q.id for q in RESULT.questions if isinstance(q, NumericQuestion)
             and len(evaluated[q.id]) != min(2000, math.prod(len(p.values) for p in q.params))]
    assert short == []
