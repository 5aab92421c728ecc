"""Optional daily limits on new questions and reviews, as in Anki.

Off by default. quizprep prepares for an interview on a date: a learner with 268 questions and
three weeks must see a dozen new ones a day or more, and is the one who knows how much an
evening holds, so no limit is imposed; Anki's 20 new / 200 reviews suit a deck studied for
months. Set them (saved in the progress store, for later runs too) to pace a long preparation:
practice then asks as Anki does, the reviews due up to the review limit, then new questions up
to the new limit, and nothing ahead of schedule; review asks the due ones up to its limit.

A day is the learner's calendar day (local midnight to midnight). A question is new on the day
of its first scheduled answer; any later day's answer to it is a review. Cram answers, which
move no card, count for neither.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta, tzinfo

from quizprep.study.store import Store

NEW_SETTING = "new_per_day"
REVIEWS_SETTING = "reviews_per_day"
UNSCHEDULED_MODES = frozenset({"cram"})


@dataclass(frozen=True)
class DailyLimits:
    """New questions and reviews a day; None: no limit."""

    new: int | None = None
    reviews: int | None = None

    @property
    def set(self) -> bool:
        return self.new is not None or self.reviews is not None

    def describe(self) -> str:
        """E.g. "20 new, 200 reviews a day", "no daily limits"."""
        parts = [f"{count} {what}" for count, what in ((self.new, "new"), (self.reviews, "reviews"))
                 if count is not None]
        return f"{', '.join(parts)} a day" if parts else "no daily limits"


@dataclass(frozen=True)
class Allowance:
    """What today's limits leave: questions still allowed (None: no limit), and what was done."""

    limits: DailyLimits
    new_left: int | None
    reviews_left: int | None
    new_done: int
    reviews_done: int
    tomorrow: datetime  # when the counts start again

    def reached(self, mode: str = "practice") -> str | None:
        """Which of today's limits on a session of `mode` is used up, e.g. "today's review limit
        (200)"; None if neither. A review session asks no new question: only its limit counts."""
        bounding = (("new", self.limits.new, self.new_left),) * (mode != "review") + (
            ("review", self.limits.reviews, self.reviews_left),)
        names = [f"{what} limit ({limit})" for what, limit, left in bounding if left == 0]
        return f"today's {' and '.join(names)}" if names else None

    def next_review(self, due: datetime | None) -> datetime | None:
        """When the next review can be asked: when a card comes due (`due`), and not before
        tomorrow once the review limit is used up."""
        if due is None or self.reviews_left != 0:
            return due
        return max(due, self.tomorrow)


def _count(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


def read_limits(store: Store) -> DailyLimits:
    """The limits saved in the store (a missing or garbled value: no limit)."""
    return DailyLimits(_count(store.setting(NEW_SETTING)), _count(store.setting(REVIEWS_SETTING)))


def save_limits(store: Store, limits: DailyLimits) -> None:
    """Save both limits ("none" clears one)."""
    for key, count in ((NEW_SETTING, limits.new), (REVIEWS_SETTING, limits.reviews)):
        if count is not None and count < 0:
            raise ValueError(f"a daily limit is 0 or more, got {count}")
        store.set_setting(key, "none" if count is None else str(count))


def day_bounds(now: datetime, zone: tzinfo | None) -> tuple[datetime, datetime]:
    """The start of `now`'s day in `zone` (None: this machine's) and of the next, as aware times."""
    local = now.astimezone(zone)
    start = datetime.combine(local.date(), time(0), local.tzinfo)
    # Midnight of the next calendar day, not start + 24 h: a daylight-saving change makes a day
    # 23 or 25 hours long.
    following = (start + timedelta(days=1, hours=2)).replace(hour=0, minute=0)
    if zone is None:
        start, following = start.replace(tzinfo=None).astimezone(), following.replace(tzinfo=None).astimezone()
    return start, following


def allowance(store: Store, limits: DailyLimits, now: datetime, zone: tzinfo | None) -> Allowance:
    """Today's counts against `limits`."""
    start, tomorrow = day_bounds(now, zone)
    first: dict[str, datetime] = {}
    new_today: set[str] = set()
    reviewed_today: set[str] = set()
    for answer in store.answers():
        if answer.mode in UNSCHEDULED_MODES:
            continue
        began = first.setdefault(answer.question_id, answer.answered_at)
        if start <= answer.answered_at < tomorrow:
            (new_today if began >= start else reviewed_today).add(answer.question_id)
    reviewed_today -= new_today

    def left(limit: int | None, done: int) -> int | None:
        return None if limit is None else max(0, limit - done)

    return Allowance(limits, left(limits.new, len(new_today)), left(limits.reviews, len(reviewed_today)),
                     len(new_today), len(reviewed_today), tomorrow)
