"""Fuzzing (issue 14): hostile formulas and bank structures end in a clean error or a valid bank
that a learner can be asked, answer and get judged on; never in an exception."""
from __future__ import annotations

import math
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quizprep.bank.formula import FUNCTIONS, FormulaError, parse_formula
from quizprep.bank.model import BankError, NumericQuestion
from quizprep.bank.numeric import draw, expected_text, judge, worked_steps
from quizprep.bank.validate import read_bank

HOSTILE_NUMBERS = ["0", "1", "-1", "2", "0.5", "1e308", "1e309", "1e-320", "1e100", "1e101", "10**309",
                   "2**1100", "9" * 60, "9" * 5000, "inf", "nan", "True", "(1/3)"]
NAMES = ["a", "b", "answer", "__class__", "x1"]


@st.composite
def formulas(draw_: st.DrawFn, depth: int = 4) -> str:
    if depth == 0 or draw_(st.integers(0, 3)) == 0:
        return draw_(st.sampled_from(HOSTILE_NUMBERS + NAMES))
    shape = draw_(st.integers(0, 5))
    inner = formulas(depth - 1)
    if shape == 0:
        op = draw_(st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "<", "==", "and", "or"]))
        return f"({draw_(inner)} {op} {draw_(inner)})"
    if shape == 1:
        return draw_(st.sampled_from(["-", "+", "not ", "-" * 150])) + draw_(inner)
    if shape == 2:
        name = draw_(st.sampled_from([*FUNCTIONS, "eval", "open"]))
        return f"{name}({', '.join(draw_(st.lists(inner, max_size=3)))})"
    if shape == 3:
        return f"({draw_(inner)} if {draw_(inner)} else {draw_(inner)})"
    if shape == 4:
        return "(" * 120 + draw_(inner) + ")" * 120
    return f"{draw_(inner)}.real"


FINITE = st.one_of(st.integers(-10**30, 10**30), st.floats(allow_nan=False, allow_infinity=False))


@settings(max_examples=400, deadline=None)
@given(formulas(), FINITE, FINITE)
def test_any_formula_parses_and_evaluates_to_a_finite_number_or_a_formula_error(source, a, b):
    try:
        formula = parse_formula(source)
    except FormulaError:
        return
    env = {name: (a, b)[i % 2] for i, name in enumerate(sorted(formula.names))}
    formula.render(env)
    try:
        value = formula.evaluate(env)
    except FormulaError:
        return
    assert math.isfinite(float(value))


FIELD_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.sampled_from([10**400, -(2**1100)]),
              st.floats(), st.text(max_size=12), st.sampled_from(HOSTILE_NUMBERS + ["q-1\n", "B", "GiB"])),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.sampled_from(["range", "choices", "step", "rel", "abs",
                                                                "text", "correct", "weight", "criterion",
                                                                "formula", "message", "x"]),
                                               children, max_size=3)),
    max_leaves=12,
)
VALID_NUMERIC = {
    "id": "q-num", "kind": "numeric", "difficulty": 1, "tags": [], "prompt": "{{x}} and {{answer}}",
    "explanation": "e", "references": ["r"], "params": {"x": {"range": [1, 20]}, "y": 3},
    "derived": {"z": "x * y"}, "answer": "z / 2 + 1", "unit": "B", "tolerance": 0.01,
    "wrong_answers": [{"formula": "answer * 2", "message": "doubled"}],
}
COMMON = {key: VALID_NUMERIC[key] for key in ("difficulty", "tags", "explanation", "references")}
VALID_CHOICE = {**COMMON, "id": "q-choice", "kind": "choice", "prompt": "Pick one.",
                "choices": [{"text": "right", "correct": True, "why": "w"}, {"text": "wrong", "why": "w"}]}
VALID_FREE = {**COMMON, "id": "q-free", "kind": "free", "prompt": "Explain.", "model_answer": "m",
              "rubric": [{"criterion": c, "weight": 1} for c in "abc"]}
FIELDS = [*VALID_NUMERIC, "choices", "rubric", "model_answer", "chain", "display_unit"]


@st.composite
def banks(draw_: st.DrawFn) -> dict:
    questions = []
    for _ in range(draw_(st.integers(1, 3))):
        question = dict(draw_(st.sampled_from([VALID_NUMERIC, VALID_CHOICE, VALID_FREE])))
        for field in draw_(st.lists(st.sampled_from(FIELDS), max_size=4)):
            if draw_(st.booleans()):
                question[field] = draw_(FIELD_VALUES)
            else:
                question[field] = draw_(st.sampled_from(["x / (x - 5)", "x ** y ** x", "-" * 200 + "x",
                                                         "1e309 * x", "x * 10**300", "log(x - 1)", ""]))
        questions.append(question)
    return {"topic": "t", "title": "T", "questions": questions}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(banks())
def test_any_bank_is_a_clean_error_or_a_valid_bank(tmp_path: Path, data: dict):
    path = tmp_path / "bank.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    bank, errors = read_bank(path)
    lines = path.read_text().count("\n") + 1
    for error in errors:
        assert isinstance(error, BankError) and error.file == str(path) and 1 <= error.line <= lines
        assert error.message
    for question in bank.questions if bank else ():
        if isinstance(question, NumericQuestion):
            for seed in (1, 2, 3):
                shown = draw(question, seed)
                assert math.isfinite(float(shown.answer))
                worked_steps(question, shown)
                assert judge(question, shown, expected_text(question, shown)).error is None
                if question.tolerance.relative:  # a relative tolerance never accepts 0 for a non-zero answer
                    assert judge(question, shown, "0").correct is (shown.answer == 0)
