"""The pieces of the screens that carry logic of their own."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from quizprep.bank import load_banks
from quizprep.bank.model import RubricItem
from quizprep.study.session import Showing, Tally
from quizprep.tui.screens.feedback import due_phrase
from quizprep.tui.screens.home import bar, shorten
from quizprep.tui.screens.question import header_line
from quizprep.bank.units import EXAMPLES, example_for
from quizprep.tui.widgets.numeric_answer import answer_hint
from quizprep.tui.widgets.round_timer import format_clock
from quizprep.tui.widgets.rubric_checklist import weighted_score

DATA = Path(__file__).parent / "data"

NOW = datetime(2025, 3, 10, 9, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("seconds, shown", [(1200, "20:00"), (59.2, "01:00"), (0.4, "00:01"), (0, "00:00"),
                                            (-3, "00:00")])
def test_clock_rounds_up_so_it_shows_zero_only_when_time_is_up(seconds, shown):
    assert format_clock(seconds) == shown


def test_weighted_score_counts_weights_not_items():
    rubric = (RubricItem("a", 2.0), RubricItem("b", 1.0), RubricItem("c", 1.0))
    assert weighted_score(rubric, frozenset({0})) == 0.5
    assert weighted_score(rubric, frozenset({1, 2})) == 0.5
    assert weighted_score(rubric, frozenset({0, 1, 2})) == 1.0


def test_mastery_bar_and_short_titles():
    assert bar(0.73) == "███████░░░" and bar(None) == "░" * 10
    assert shorten("Memory of attention (score matrices)", 12) == "Memory of a…"
    assert shorten("Softmax", 12) == "Softmax"


@pytest.mark.parametrize("seconds, phrase", [(30, "in 1 min"), (600, "in 10 min"), (7200, "in 2 h"),
                                             (86400, "in 1 day"), (3 * 86400, "in 3 days")])
def test_next_review_phrase(seconds, phrase):
    assert due_phrase(NOW + timedelta(seconds=seconds), NOW) == phrase


def test_header_marks_follow_ups():
    question = {q.id: q for q in load_banks([DATA]).questions}["alpha-free"]
    session = SimpleNamespace(mode="mock", tally=lambda: Tally(3, 5, 0, 0))
    assert header_line(session, Showing(question, 3, NOW, follow_up_of="alpha-numeric")) == (
        "Mock interview 3/5 · alpha · free response · follow-up · ★★★")
    assert "follow-up" not in header_line(session, Showing(question, 3, NOW))


@pytest.mark.parametrize("unit, display_unit, hint", [
    ("B", "MiB", "A bare number counts as MiB, as asked; other units work too."),
    ("B", None, 'Answer in bytes, e.g. "32 GiB", "3.4e10 B" or "512 MB".'),
    ("FLOP", "FLOP", 'Answer in FLOPs, e.g. "1.5 TFLOP" or "2.7e8".'),
    ("", None, 'Answer with a number, e.g. "0.73", "2.7e8" or "268M".'),
    ("", "%", "A bare number counts as percent, as asked: 31.85 and 31.85% both mean 31.85 %."),
    ("s", "days", "A bare number counts as days, as asked; other units work too."),
])
def test_numeric_hint_says_a_bare_number_is_in_the_unit_asked_for(unit, display_unit, hint):
    assert answer_hint(unit, display_unit) == hint


@pytest.mark.parametrize("unit, display_unit", [("", "%"), ("B", None), ("", None), ("FLOP", None)])
def test_no_example_in_a_numeric_hint_is_the_answer(unit, display_unit):
    """Issue 32: training-mfu's hint said "31.85 and 31.85% both mean 31.85 %" on draws whose
    answer was 31.85 %. Whichever example is the answer, the hint and placeholder leave it out."""
    for answer in EXAMPLES["%" if display_unit == "%" else unit]:
        def right(text: str, answer: str = answer) -> bool:
            return text == answer

        assert f'"{answer}"' not in example_for("%" if display_unit == "%" else unit, right)
        assert answer not in answer_hint(unit, display_unit, right)
