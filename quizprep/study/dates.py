"""An interview date as people type it: "2026-12-15", "Dec 15", "15 December 2026", "15/12".

A small strict set of forms (no date parser is a dependency): a year-first date, a month by
name with its day, or day and month in digits when only one reading is a date ("15/12"; "12/11"
could be 12 November or December 11 and is refused). A date without its year is the next one
from today on. Its own module, importing nothing heavy: the command line reads --interview."""
from __future__ import annotations

import re
from datetime import date

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")
EXAMPLES = "e.g. 2026-12-15, Dec 15 or 15/12"

_YEAR_FIRST = re.compile(r"(?P<year>\d{4})[-/.](?P<month>\d{1,2})[-/.](?P<day>\d{1,2})")
_ORDINAL = r"(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<year>\d{4}))?"
_NAME_FIRST = re.compile(rf"(?P<name>[a-z]{{3,}})\.?\s+(?P<day>\d{{1,2}}){_ORDINAL}{_YEAR}")
_DAY_FIRST = re.compile(rf"(?P<day>\d{{1,2}}){_ORDINAL}\s+(?P<name>[a-z]{{3,}})\.?{_YEAR}")
_DIGITS = re.compile(r"(?P<first>\d{1,2})[/.](?P<second>\d{1,2})(?:[/.](?P<year>\d{4}))?")


def read_date(text: str, today: date) -> date:
    """The date `text` names, today or later; ValueError says what is wrong and how to write it."""
    typed = " ".join(text.split())
    year, month, day = _parts(typed.casefold())
    try:
        on = date(year or today.year, month, day)
        if year is None and on < today:
            on = date(today.year + 1, month, day)
    except ValueError as error:
        raise ValueError(f"{typed!r} is not a date: {error}") from None
    if on < today:
        raise ValueError(f"{on.isoformat()} has passed: the interview date must be today or later "
                         f"(today is {today.isoformat()})")
    return on


def _parts(typed: str) -> tuple[int | None, int, int]:
    """(year or None, month, day) as written in `typed` (casefolded)."""
    if match := _YEAR_FIRST.fullmatch(typed):
        return int(match["year"]), int(match["month"]), int(match["day"])
    if match := _NAME_FIRST.fullmatch(typed) or _DAY_FIRST.fullmatch(typed):
        return _year(match), _month(match["name"], typed), int(match["day"])
    if match := _DIGITS.fullmatch(typed):
        return _year(match), *_day_and_month(int(match["first"]), int(match["second"]), typed)
    raise ValueError(f"{typed!r} is not a date: type it as {EXAMPLES}")


def _year(match: re.Match[str]) -> int | None:
    return int(match["year"]) if match["year"] else None


def _month(name: str, typed: str) -> int:
    """1–12 for a month's name or its start ("dec", "sept"); ValueError for anything else."""
    for number, month in enumerate(MONTHS, start=1):
        if month.startswith(name):
            return number
    raise ValueError(f"{typed!r} is not a date: {name!r} is not a month; type it as {EXAMPLES}")


def _day_and_month(first: int, second: int, typed: str) -> tuple[int, int]:
    """(month, day) of two numbers when only one order reads as a date: 15/12 and 12/15 are
    both 15 December; 12/11 is refused, being 12 November or December 11 as people write."""
    if first > 12 >= second:
        return second, first
    if second > 12 >= first:
        return first, second
    if first == second and first <= 12:
        return first, second
    if first > 12:
        raise ValueError(f"{typed!r} is not a date: neither {first} nor {second} is a month")
    raise ValueError(f"{typed!r} could be day/month or month/day: type it as {EXAMPLES.split(',')[0]} "
                     f"or with the month's name")
