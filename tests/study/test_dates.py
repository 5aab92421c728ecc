"""An interview date as people type it (issue 32, item 10: only YYYY-MM-DD was read)."""
from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given, strategies as st

from quizprep.study.dates import MONTHS, read_date

TODAY = date(2026, 3, 10)


@pytest.mark.parametrize("typed, on", [
    ("2026-12-15", date(2026, 12, 15)), ("2026/12/15", date(2026, 12, 15)), ("2026.3.10", TODAY),
    ("Dec 15", date(2026, 12, 15)), ("dec. 15th", date(2026, 12, 15)), ("December 15, 2027", date(2027, 12, 15)),
    ("15 Dec", date(2026, 12, 15)), ("15 december 2026", date(2026, 12, 15)), ("  Sept   3 ", date(2026, 9, 3)),
    ("15/12", date(2026, 12, 15)), ("12/15", date(2026, 12, 15)), ("15.12.2027", date(2027, 12, 15)),
    ("Mar 9", date(2027, 3, 9)), ("1/1", date(2027, 1, 1)),  # without a year: the next one from today
    ("Mar 10", TODAY),
])
def test_dates_are_read_as_people_type_them(typed, on):
    assert read_date(typed, TODAY) == on


@pytest.mark.parametrize("typed, says", [
    ("next week", "'next week' is not a date: type it as e.g. 2026-12-15, Dec 15 or 15/12"),
    ("12/11", "'12/11' could be day/month or month/day"),
    ("13/14", "neither 13 nor 14 is a month"),
    ("Dex 15", "'dex' is not a month"),
    ("Feb 30", "'Feb 30' is not a date: day is out of range for month"),
    ("2026-03-09", "2026-03-09 has passed: the interview date must be today or later (today is 2026-03-10)"),
    ("2026-12-15 extra", "is not a date"),
])
def test_anything_else_is_refused_saying_how_to_write_it(typed, says):
    with pytest.raises(ValueError, match=says.replace("(", r"\(").replace(")", r"\)")):
        read_date(typed, TODAY)


@given(st.dates(min_value=TODAY, max_value=TODAY + timedelta(days=3000)))
def test_every_date_from_today_reads_back_in_each_form(on):
    name = MONTHS[on.month - 1]
    for typed in (on.isoformat(), f"{name[:3]} {on.day}, {on.year}", f"{on.day} {name} {on.year}"):
        assert read_date(typed, TODAY) == on
