"""Times read like byte sizes, in any unit from ns to weeks (issue 32, item 5), slips of typing
named (item 10: 64X, 0x10, 1,5, an 800-character answer), and a question
that asks in percent reads "31.85%" as 31.85 percent (issue 33, item 1)."""
from __future__ import annotations

import re

import pytest

from quizprep.bank import NumericQuestion, load_banks
from quizprep.bank.numeric import draw, judge, tolerance_text
from quizprep.bank.units import UnitError, parse_quantity
from test_slips import SHIPPED

NUMERIC = [q for q in load_banks([SHIPPED]).questions if isinstance(q, NumericQuestion)]
ASKS_PERCENT = re.compile(r"\bin percent\b|\bas a percentage\b|\bin %", re.IGNORECASE)


def shipped(question_id: str) -> NumericQuestion:
    return next(q for q in NUMERIC if q.id == question_id)


@pytest.mark.parametrize("typed, seconds", [
    ("51.4 days", 51.4 * 86400), ("51.4 d", 51.4 * 86400), ("7.3 weeks", 7.3 * 7 * 86400),
    ("4.44e6 s", 4.44e6), ("3 hours", 3 * 3600), ("2 h", 7200), ("90 min", 5400), ("51.4", 51.4 * 86400),
])
def test_times_are_read_in_any_unit_and_a_bare_number_in_the_unit_asked(typed, seconds):
    assert parse_quantity(typed, "s", "days").value == pytest.approx(seconds)


def test_a_time_is_not_a_size():
    with pytest.raises(UnitError, match="unit of seconds"):
        parse_quantity("3 days", "B")


@pytest.mark.parametrize("seed", range(4))
def test_training_days_is_answered_in_days_weeks_or_seconds(seed):
    quiz = shipped("training-days")
    shown = draw(quiz, seed)
    seconds = float(shown.answer)
    for typed in (f"{seconds / 86400:.4g} days", f"{seconds / 86400:.4g} d", f"{seconds / 86400:.4g}",
                  f"{seconds / 604800:.4g} weeks", f"{seconds:.4g} s"):
        assert judge(quiz, shown, typed).correct, typed


@pytest.mark.parametrize("seed", range(4))
def test_training_mfu_reads_a_percent_sign_as_percent(seed):
    quiz = shipped("training-mfu")
    shown = draw(quiz, seed)
    percent = float(shown.answer) * 100
    for typed in (f"{percent:.2f}%", f"{percent:.2f} %", f"{percent:.2f}"):
        verdict = judge(quiz, shown, typed)
        assert verdict.correct, (typed, verdict)
    assert judge(quiz, shown, f"{percent:.2f}").understood == f"{percent:.4g} % ({float(shown.answer):.4g})"


def test_every_question_that_asks_in_percent_reads_numbers_as_percent():
    asking = [q for q in NUMERIC if ASKS_PERCENT.search(q.prompt)]
    assert asking, "no question asks in percent: the pattern is stale"
    for quiz in asking:
        shown = draw(quiz, 0)
        percent = float(shown.answer) * 100
        assert quiz.display_unit == "%", quiz.id
        assert judge(quiz, shown, f"{percent!r}%").correct and judge(quiz, shown, repr(percent)).correct, quiz.id


def test_fractions_asked_without_percent_still_read_a_percent_sign_as_hundredths():
    fractions = [q for q in NUMERIC if q.unit == "" and not q.display_unit and 0 < float(draw(q, 0).answer) < 1]
    assert fractions
    for quiz in fractions:
        shown = draw(quiz, 0)
        assert judge(quiz, shown, f"{float(shown.answer) * 100!r}%").correct, quiz.id


def test_a_factor_reads_with_a_capital_x_too():
    assert parse_quantity("64X", "").value == parse_quantity("64x", "").value == 64


def test_a_hex_literal_is_refused_not_read_as_a_product():
    with pytest.raises(UnitError, match=r"'0x10' reads as hexadecimal; write it in decimal \(16\)"):
        parse_quantity("0x10", "B", "MiB")


def test_a_decimal_comma_is_named():
    with pytest.raises(UnitError, match="write decimals with a point"):
        parse_quantity("1,5", "B", "MiB")
    assert parse_quantity("1,048,576 B", "B").value == 2**20  # thousands still group


def test_a_long_answer_is_quoted_back_cut():
    with pytest.raises(UnitError) as refused:
        parse_quantity("y" * 800, "B")
    assert len(str(refused.value)) < 120


def test_a_fraction_typed_for_a_percent_is_told_how_to_write_it():
    quiz = shipped("training-mfu")
    shown = draw(quiz, 0)
    fraction = f"{float(shown.answer):.4f}"
    diagnosis = judge(quiz, shown, fraction).diagnosis or ""
    assert diagnosis.endswith(f'As a fraction, {fraction} is written "{float(fraction) * 100:g}%".'), diagnosis


def test_every_absolute_tolerance_is_shown_in_the_unit_the_question_is_answered_in():
    """Issue 32: "±0.005" on a question answered in percent, where 0.5 was meant."""
    for quiz in (q for q in NUMERIC if q.tolerance.absolute):
        shown = tolerance_text(quiz)
        read = parse_quantity(shown.removeprefix("±"), quiz.unit, quiz.display_unit)  # as an answer is read
        assert read.value == pytest.approx(quiz.tolerance.absolute, rel=1e-3), (quiz.id, shown)
        if quiz.display_unit:
            assert shown.endswith(f" {quiz.display_unit}"), (quiz.id, shown)


def test_a_percent_question_shows_its_tolerance_in_points_of_percent():
    assert tolerance_text(shipped("training-mfu")) == f"±{shipped('training-mfu').tolerance.absolute * 100:g} %"


@pytest.mark.parametrize("text", ["64x", "64X", "×64"])
def test_a_factor_is_not_read_as_percent_where_percent_is_asked(text):
    """64x on a question in percent is not 64 % (it read so, a hundredfold slip unsaid)."""
    with pytest.raises(UnitError, match="marks a factor; this question asks in percent"):
        parse_quantity(text, "", "%")
