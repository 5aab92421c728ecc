"""A generated numeric question's explanation follows the draw: it must not state, as a typed-in
number, a result that its own answer or a derived value takes in some draws but not in others.

Such a number is a worked example frozen at one draw ("With 80 GiB, a bf16 cache and 8K-token
reservations: … = 65 requests" on a question that drew 4,096-token reservations and expects 130):
every learner shown another draw reads a result that contradicts their worked solution. Numbers
that follow the draw are written as placeholders ({{answer}}, {{free_bytes}}); a number the
answer takes in none of the draws (a constant, a fact about a real model) cannot contradict one.

An explanation that states the value of every draw (bf16, fp16 and fp32's epsilon, each named)
is a table of the cases, not a frozen draw: every learner finds their own line in it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from quizprep.bank import NumericQuestion, load_banks
from quizprep.bank.audit import audited_draws
from quizprep.bank.cues import SMALL_COUNT
from quizprep.bank.formula import format_number
from quizprep.bank.numeric import PLACEHOLDER, draw, fill_placeholders
from quizprep.bank.units import scale_of

RESULT = load_banks()
GENERATED = [q for q in RESULT.questions if isinstance(q, NumericQuestion) and q.generated]
EVALUATED = audited_draws(GENERATED)
# A rounded figure is close to the value it rounds ("≈ 4.95 ms"), not to every value within half
# its last digit: "0.1" does not state 0.135.
MOST_ROUNDING = 0.02
# A number as prose writes it: 65, 30,000, 0.0078125, 1.19e−7, with the unit word after it.
_NUMBER = re.compile(r"(?<![\w.^_⁻])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:[eE][+\-−]?\d+)?)(?![\w^]|\.\d)"
                     r"\s?([A-Za-z%]*)")

# Numbers that equal a value of some draws by coincidence, each with what it is instead.
COINCIDENCES: dict[str, dict[float, str]] = {
    "beyond-mamba-state-bytes": {2560: "Pythia-2.8B's d_model, beside the Mamba state"},
    "gate-gate-params": {2048: "Qwen3-Next-80B-A3B's hidden size"},
    "kv-cache-paged-blocks": {128: "128 KiB, Llama-3-8B's cache per token"},
    "multihead-dk-from-dmodel": {512: "the base Transformer's d_model", 768: "GPT-2 small's d_model",
                                 64: "the head size of both"},
    "position-pi-mapping": {1000: "Chen et al.'s fine-tuning steps", 32768: "the context Chen et al. reached"},
    "triton-tile-sram": {64: "a head dimension, d = 64, not a tile size"},
}


def stated(text: str) -> list[tuple[str, float, str]]:
    """Each number `text` writes outside placeholders: as written, its value, the word after it."""
    prose = PLACEHOLDER.sub(" ", text)
    return [(m.group(1), float(m.group(1).replace(",", "").replace("−", "-")), m.group(2))
            for m in _NUMBER.finditer(prose)]


def states(written: str, number: float, value: float) -> bool:
    """Whether `written` (read as `number`) is `value` to the precision it is written with: the
    last decimal, or for a whole number its last non-zero digit ("54,000" ± 500)."""
    if "e" in written.lower():
        mantissa = re.split(r"[eE]", written)[0]
        digits = len(mantissa.split(".")[1]) if "." in mantissa else 0
        half_unit = 0.5 * 10 ** (math_exponent(number) - digits)
    elif "." in written:
        half_unit = 0.5 * 10 ** -len(written.split(".")[1])
    else:
        plain = written.replace(",", "")
        half_unit = 0.5 * 10 ** (len(plain) - len(plain.rstrip("0"))) if plain.strip("0") else 0.5
    return abs(number - value) <= half_unit and abs(number - value) <= MOST_ROUNDING * abs(value)


def math_exponent(number: float) -> int:
    return int(f"{number:e}".split("e")[1])


def frozen_results(question: NumericQuestion, envs: list[dict[str, float]]) -> list[str]:
    """The explanation's numbers that the answer or a derived value takes in some of `envs` but
    not in all, unless every value it takes is stated: "65: answer = 65 in some draws, one of 10
    values"."""
    names = [name for name, _ in question.derived] + ["answer"]
    scale = scale_of(question.display_unit, question.unit) if question.display_unit else 1.0
    allowed = COINCIDENCES.get(question.id, {})
    found = []
    for name in names:
        taken = sorted({float(env[name]) for env in envs})
        if len(taken) < 2:
            continue  # the same in every draw: a number stating it follows every draw
        hits: dict[float, list[str]] = {}
        for written, number, word in stated(question.explanation):
            in_unit = name == "answer" and question.display_unit is not None and word == question.display_unit
            if number in allowed or (not in_unit and number.is_integer() and number <= SMALL_COUNT):
                continue  # small whole numbers count things in prose: "2 heads", "4 bytes"
            for drawn in taken:
                if states(written, number, drawn / scale if in_unit else drawn):
                    hits.setdefault(drawn, []).append(f"{written} {word}" if in_unit else written)
        if hits and len(hits) < len(taken):  # a table of every case is no frozen draw
            found += [f"{' and '.join(dict.fromkeys(shown))}: {name} = {format_number(drawn)} in some draws, "
                      f"one of {len(taken)} values" for drawn, shown in hits.items()]
    return found


@pytest.mark.parametrize("question", GENERATED, ids=lambda q: q.id)
def test_the_explanation_states_no_result_of_one_draw(question: NumericQuestion) -> None:
    assert frozen_results(question, EVALUATED[question.id]) == []


def test_two_draws_read_their_own_results() -> None:
    # kv-cache-max-batch once stated "= 65 requests" whatever it drew; now each draw reads its own.
    question = next(q for q in GENERATED if q.id == "kv-cache-max-batch")
    shown = {}
    for seed in range(40):
        picked = draw(question, seed)
        shown[picked.answer] = fill_placeholders(question.explanation, picked)
    assert len(shown) >= 2
    for answer, text in shown.items():
        assert f"round down: {answer:,} requests" in text
        assert not [other for other in shown if other != answer and f" {other:,} requests" in text]


def test_the_check_finds_a_frozen_draw(tmp_path: Path) -> None:
    bank = tmp_path / "frozen.yaml"
    bank.write_text(FROZEN)
    [question] = load_banks([bank]).questions
    assert isinstance(question, NumericQuestion)
    found = frozen_results(question, audited_draws([question])[question.id])
    assert found == ["8 MiB: answer = 8,388,608 in some draws, one of 4 values"]
    bank.write_text(FROZEN.replace("At n = 2048 that is 2048² × 2 B = 8 MiB.", "Here {{n}}² × 2 B."))
    [question] = load_banks([bank]).questions
    assert frozen_results(question, audited_draws([question])[question.id]) == []


def test_a_table_of_every_case_is_no_frozen_draw(tmp_path: Path) -> None:
    bank = tmp_path / "table.yaml"
    bank.write_text(FROZEN.replace("At n = 2048 that is 2048² × 2 B = 8 MiB.",
                                   "1,024 gives 2 MiB, 2,048 gives 8 MiB, 4,096 gives 32 MiB and 8,192 gives "
                                   "128 MiB."))
    [question] = load_banks([bank]).questions
    assert isinstance(question, NumericQuestion)
    assert frozen_results(question, audited_draws([question])[question.id]) == []


def test_rounded_figures_state_the_value_they_round() -> None:
    assert states("4.95", 4.95, 4.9537) and states("54,000", 54000, 54410) and states("1.19e−7", 1.19e-7, 2**-23)
    assert not states("0.1", 0.1, 0.135) and not states("65", 65, 130) and not states("30,000", 30000, 16)


FROZEN = """\
topic: frozen
title: A frozen draw
questions:
  - id: frozen-scores
    kind: numeric
    difficulty: 1
    tags: []
    prompt: An n × n fp16 score matrix for n = {{n}}. Answer in MiB.
    explanation: One head, one sequence. At n = 2048 that is 2048² × 2 B = 8 MiB.
    references: ["Vaswani et al. 2017"]
    params:
      n: {choices: [1024, 2048, 4096, 8192]}
    answer: n * n * 2
    unit: B
    display_unit: MiB
    tolerance: 0.01
"""


@pytest.mark.parametrize("question_id", sorted(COINCIDENCES))
def test_every_listed_coincidence_is_still_one(question_id: str) -> None:
    # An entry that no longer matches a draw, or that the explanation no longer writes, hides nothing
    # today and would hide a frozen draw tomorrow: remove it.
    [question] = [q for q in GENERATED if q.id == question_id]
    written = {number for _, number, _ in stated(question.explanation)}
    envs = EVALUATED[question_id]
    drawn = {float(env[name]) for env in envs for name in [n for n, _ in question.derived] + ["answer"]}
    assert set(COINCIDENCES[question_id]) <= written
    assert set(COINCIDENCES[question_id]) <= drawn
