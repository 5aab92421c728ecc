"""Numeric questions at run time: draw parameters, show the worked computation, judge answers."""
from __future__ import annotations

import itertools
import math
import random
import re
from dataclasses import dataclass
from typing import Callable, Mapping

from quizprep.bank.formula import Formula, FormulaError, Number, format_signed
from quizprep.bank.model import NumericQuestion
from quizprep.bank.slips import diagnose
from quizprep.bank.units import UnitError, format_quantity, parse_quantity, scaled_quantity

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")  # {{name}} in prompts and explanations
# "{{kv_heads}} key/value head(s)": a noun counted by a placeholder, at most one word after it.
COUNTED_NOUN = re.compile(r"(\{\{\s*([A-Za-z_]\w*)\s*\}\}\s+(?:[\w/-]+\s+)?)(\w+)\(s\)")
DRAW_ATTEMPTS = 20
MOST_DRAWS_TRIED = 4096  # a template not drawn lists what its values take over at most these draws
SPELLED_OUT = 3  # values listed one by one; more are written as their span

@dataclass(frozen=True)
class Draw:
    """One showing of a numeric question: the seed, every named value and the answer."""

    seed: int
    values: Mapping[str, Number]

    @property
    def answer(self) -> Number:
        return self.values["answer"]


@dataclass(frozen=True)
class NumericVerdict:
    correct: bool
    value: float | None
    understood: str
    expected: str
    diagnosis: str | None = None
    error: str | None = None


def evaluate_draw(derived: tuple[tuple[str, Formula], ...], answer: Formula,
                  params: Mapping[str, Number]) -> dict[str, Number]:
    env: dict[str, Number] = dict(params)
    for name, formula in derived:
        env[name] = formula.evaluate(env)
    env["answer"] = answer.evaluate(env)
    return env


def draw(question: NumericQuestion, seed: int) -> Draw:
    """Parameters drawn reproducibly from `seed`: the same seed gives the same numbers.

    `quizprep check` evaluates a sample of the draws of a question with many; should one it did
    not try fail, the next parameters from the same seed are taken (still reproducible)."""
    rng = random.Random(f"{question.id}:{seed}")
    assert question.answer is not None
    for _ in range(DRAW_ATTEMPTS - 1):
        try:
            return Draw(seed, evaluate_draw(question.derived, question.answer, _params(question, rng)))
        except FormulaError:
            continue
    return Draw(seed, evaluate_draw(question.derived, question.answer, _params(question, rng)))


def _params(question: NumericQuestion, rng: random.Random) -> dict[str, Number]:
    return {p.name: rng.choice(p.values) for p in question.params}


def counted(text: str, only_one: Callable[[str], bool]) -> str:
    """`text` with each "word(s)" counted by a placeholder in the singular where `only_one` says
    that placeholder is 1, else in the plural: "1 KV head", "8 KV heads", never "head(s)"."""
    return COUNTED_NOUN.sub(lambda m: m.group(1) + m.group(3) + ("" if only_one(m.group(2)) else "s"), text)


def fill_placeholders(text: str, draw: Draw) -> str:
    """`text` with each {{name}} written as this draw's value, a negative one with a typographic
    minus ("x = −1"): prose writes −, the hyphen is for code."""
    text = counted(text, lambda name: draw.values.get(name) == 1)
    return PLACEHOLDER.sub(lambda m: format_signed(draw.values[m.group(1)]), text)


def fill_template(text: str, question: NumericQuestion) -> str:
    """`text` as Markdown for a question not yet drawn (history, a report's unasked questions):
    each value as the values its draws take, so that "with {{heads}} heads, {{bytes}} bytes
    each" reads "with 8, 16 or 32 heads, 2 bytes each" (its bare name read "with heads heads").
    A value with too many draws to try them all is named, in italics."""
    drawn = values_drawn(question)
    written = {name: spelled(values) for name, values in drawn.items()}
    text = counted(text, lambda name: drawn.get(name) == {1})
    return PLACEHOLDER.sub(lambda m: written.get(m.group(1), f"*{m.group(1)}*"), text)


def values_drawn(question: NumericQuestion) -> dict[str, set[Number]]:
    """Every value each parameter and derived value takes over all the question's draws (those
    a formula refuses left out); only the parameters' own when the draws are too many to try."""
    params = [p.values for p in question.params]
    seen: dict[str, set[Number]] = {p.name: set(p.values) for p in question.params}
    if math.prod(map(len, params)) > MOST_DRAWS_TRIED:
        return seen
    for values in itertools.product(*params):
        env: dict[str, Number] = {p.name: value for p, value in zip(question.params, values)}
        for name, formula in question.derived:
            try:
                env[name] = formula.evaluate(env)
            except FormulaError:
                break
            seen.setdefault(name, set()).add(env[name])
    return seen


def spelled(values: set[Number]) -> str:
    """"2", "8, 16 or 32"; more values as their span, "1 to 64"."""
    shown = [format_signed(value) for value in sorted(values)]
    if len(shown) > SPELLED_OUT:
        return f"{shown[0]} to {shown[-1]}"
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


def worked_steps(question: NumericQuestion, draw: Draw) -> list[str]:
    """Each derived value and the answer, as formula = numbers = result."""
    assert question.answer is not None
    steps = [(name, formula) for name, formula in question.derived] + [("answer", question.answer)]
    lines = []
    for name, formula in steps:
        substituted = formula.render(draw.values)
        result = format_signed(draw.values[name])
        if name == "answer":
            result = expected_text(question, draw)
        middle = f" = {substituted}" if substituted != result and formula.names else ""
        lines.append(f"{name} = {formula.render()}{middle} = {result}")
    return lines


def expected_text(question: NumericQuestion, draw: Draw) -> str:
    return format_quantity(float(draw.answer), question.unit, question.display_unit)


def tolerance_text(question: NumericQuestion) -> str:
    """The tolerance in the unit the learner answers in: an absolute one scaled as the answer is
    ("±0.5 %" on a question asked in percent, not the fraction ±0.005; "±1 MiB"), a relative one
    as a share of the answer ("±2%")."""
    absolute = question.tolerance.absolute
    if not absolute:
        return str(question.tolerance)
    return f"±{scaled_quantity(absolute, question.unit, question.display_unit)}"


def judge(question: NumericQuestion, draw: Draw, text: str) -> NumericVerdict:
    expected = expected_text(question, draw)
    try:
        quantity = parse_quantity(text, question.unit, question.display_unit)
    except UnitError as error:
        return NumericVerdict(False, None, "", expected, error=str(error))
    correct = question.tolerance.accepts(quantity.value, float(draw.answer))
    diagnosis = None if correct else diagnose(question, draw, quantity)
    return NumericVerdict(correct, quantity.value, quantity.understood, expected, diagnosis)
