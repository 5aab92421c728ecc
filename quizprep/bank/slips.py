"""Naming the slip behind a wrong number: only a cause the question and the typed text make
likely, so that "Off by ×½" is not blamed on multiply-adds when a term of the sum is missing."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterator, Mapping

from quizprep.bank.formula import Formula, FormulaError, additive_terms, format_number, has_even_factor
from quizprep.bank.model import NumericQuestion
from quizprep.bank.units import (Quantity, Reading, bit_unit_name, decimal_power, exact_quantity, powers_of,
                                 scale_of, scaled_quantity)

if TYPE_CHECKING:
    from quizprep.bank.numeric import Draw

# Slips that apply to every question of a unit: (ratio given/expected, what it means).
GENERIC_SLIPS: dict[str, tuple[tuple[float, str], ...]] = {
    "B": (
        (1e9 / 2**30, "Off by ×0.931: that is GiB read as GB (1 GiB = 2³⁰ B ≈ 1.074 GB)."),
        (2**30 / 1e9, "Off by ×1.074: that is GB read as GiB (1 GiB = 2³⁰ B ≈ 1.074 GB)."),
        (1e6 / 2**20, "Off by ×0.954: MiB and MB mixed up (1 MiB = 2²⁰ B)."),
        (2**20 / 1e6, "Off by ×1.049: MB and MiB mixed up (1 MiB = 2²⁰ B)."),
        (1e12 / 2**40, "Off by ×0.909: TiB and TB mixed up (1 TiB = 2⁴⁰ B)."),
        (2**40 / 1e12, "Off by ×1.100: TB and TiB mixed up (1 TiB = 2⁴⁰ B)."),
        (1e3 / 2**10, "Off by ×0.977: KiB and kB mixed up (1 KiB = 1024 B, 1 kB = 1000 B)."),
        (2**10 / 1e3, "Off by ×1.024: kB and KiB mixed up (1 KiB = 1024 B, 1 kB = 1000 B)."),
    ),
    "FLOP": (
        (2.0, "Off by ×2: a multiply-add was counted as 4 FLOPs, or the causal half was not taken."),
    ),
}

# Only where the answer's formula shows the ×2 of a multiply-add counted as 2 FLOPs.
MULTIPLY_ADDS = (0.5, "Off by ×½: that counts multiply-adds (MACs); one multiply-add is 2 FLOPs.")

# Last resort, for any unit: a plain factor of 2, the commonest slip in these computations.
FACTOR_OF_TWO = (
    (2.0, "Off by ×2: twice the answer, so a factor of 2 crept in (check K and V, bytes per value, "
          "FLOPs per multiply-add)."),
    (0.5, "Off by ×½: half the answer, so a factor of 2 is missing (check K and V, bytes per value, "
          "FLOPs per multiply-add)."),
)

_FRACTIONS = {0.5: "½", 1 / 3: "⅓", 0.25: "¼", 0.2: "⅕", 0.125: "⅛"}


def diagnose(question: NumericQuestion, draw: Draw, given: Quantity) -> str | None:
    """Name the slip that explains a wrong number: how the text was read first, then the
    question's own slips, a term of the answer left out, its unit's slips, a bare factor of 2."""
    expected = float(draw.answer)
    for value, message in _candidates(question, draw, given):
        # A slip only counts when this tolerance tells it apart from the right answer.
        distinct = not question.tolerance.accepts(value, expected)
        if distinct and question.tolerance.accepts(given.value, value):
            return message
    return None


def ratio_text(ratio: float) -> str:
    """"×½" for one half, "×0.977" or "×1.07" otherwise."""
    named = next((text for value, text in _FRACTIONS.items() if abs(ratio - value) < 1e-9), None)
    if named:
        return f"×{named}"
    return f"×{ratio:.3f}" if ratio < 1 else f"×{ratio:.3g}"


def _candidates(question: NumericQuestion, draw: Draw, given: Quantity) -> Iterator[tuple[float, str]]:
    expected = float(draw.answer)
    yield from _reading_slips(question, expected, given)
    for wrong in question.wrong_answers:
        try:
            yield float(wrong.formula.evaluate(draw.values)), wrong.message
        except FormulaError:
            continue  # a slip that cannot happen with these numbers
    yield from _left_out_terms(question, draw)
    unit_slips = GENERIC_SLIPS.get(question.unit, ())
    if question.unit == "B":
        levels = _prefix_levels(question, expected, given)
        unit_slips = tuple(slip for slip in unit_slips if _slip_level(slip[0]) in levels)
    assert question.answer is not None
    if question.unit == "FLOP" and has_even_factor(question.answer, dict(question.derived)):
        unit_slips += (MULTIPLY_ADDS,)
    yield from ((expected * ratio, message) for ratio, message in unit_slips + FACTOR_OF_TWO)


def _prefix_level(bytes_per_unit: float) -> int:
    """1 for kB and KiB, 2 for MB and MiB, 3 for GB and GiB..."""
    return math.floor(math.log10(bytes_per_unit) / 3 + 1e-9) if bytes_per_unit >= 1 else 0


def _slip_level(ratio: float) -> int:
    """The prefix a decimal/binary mix-up confuses: its ratio is 1.024 (or 1/1.024) to that power."""
    return round(abs(math.log(ratio)) / math.log(1.024))


def _prefix_levels(question: NumericQuestion, expected: float, given: Quantity) -> set[int]:
    """The prefixes in play, whose decimal/binary mix-ups are worth naming: the question's
    display unit and the unit typed; for a question in plain bytes answered in plain bytes, the
    answer's own size (34 GB for a 32 GiB answer)."""
    levels = {_prefix_level(given.scale)}
    if question.display_unit:
        levels.add(_prefix_level(scale_of(question.display_unit, question.unit)))
    levels.discard(0)
    return levels or {_prefix_level(expected)}


def _reading_slips(question: NumericQuestion, expected: float, given: Quantity) -> Iterator[tuple[float, str]]:
    """Slips that the typed text itself gives away: bits for bytes, k for Ki, a bare number
    meant in the base unit."""
    number = format_number(given.number)
    if given.reading is Reading.BITS:
        yield expected / 8, (f"Off by ×⅛: you wrote {bit_unit_name(given.scale)}, and the question asks bytes; "
                             f"a byte is 8 bits, so write B for bytes (b is bits).")
    elif given.reading is Reading.DECIMAL_SHORTHAND:
        power = decimal_power(given.scale)
        ratio = (1000 / 1024) ** power
        letter = "kMGT"[power - 1]
        binary = exact_quantity(given.number * 1024**power, question.unit)
        spelled = f"{number} {letter.upper()}iB or {number}*2^{10 * power} B" if question.unit \
            else f"{number}*2^{10 * power}"
        yield expected * ratio, (f"Off by {ratio_text(ratio)}: {letter} means {powers_of('1000', power)}, not "
                                 f"{powers_of('1024', power)}; {binary} is written {spelled}.")
    elif given.reading is Reading.IMPLIED_UNIT:
        unit = question.display_unit
        meant = (f"To answer in {question.unit}, write the unit: \"{number} {question.unit}\"." if question.unit
                 else f"As a fraction, {number} is written \"{format_number(given.number * 100)}%\".")
        yield expected * given.scale, (f"A bare number is read in {unit}, as the question asks: {number} is "
                                       f"{number} {unit}. {meant}")


def _left_out_terms(question: NumericQuestion, draw: Draw) -> Iterator[tuple[float, str]]:
    """The answer without one of the terms of its sum, e.g. QKᵀ counted but not PV."""
    assert question.answer is not None
    definitions = dict(question.derived)
    terms = additive_terms(question.answer, definitions)
    if len(terms) < 2:
        return
    try:
        values = [float(term.evaluate(draw.values)) for term in terms]
    except FormulaError:
        return
    expected = float(draw.answer)
    whole = question.answer.render()
    for value in dict.fromkeys(values):  # terms of equal value leave the same number
        if value <= 0 or expected == 0:
            continue
        alike = [term for term, other in zip(terms, values) if question.tolerance.accepts(other, value)]
        shown = scaled_quantity(value, question.unit, question.display_unit)
        if len(alike) == 1:
            what = f"{_label(alike[0], definitions)} = {shown}"
        else:
            names = [term.render() for term in alike]
            formulas = {definitions[name].render() if name in definitions else name for name in names}
            each = f"{formulas.pop()} = {shown}" if len(formulas) == 1 else shown
            what = f"one of {', '.join(names[:-1])} and {names[-1]} (each {each})"
        ratio = (expected - value) / expected
        yield expected - value, f"Off by {ratio_text(ratio)}: that leaves out {what}; the answer is {whole}."


def _label(term: Formula, definitions: Mapping[str, Formula]) -> str:
    """A derived name with its formula: "pv_flops = 2 × batch × heads × n × m × d"."""
    name = term.render()
    return f"{name} = {definitions[name].render()}" if name in definitions else name
