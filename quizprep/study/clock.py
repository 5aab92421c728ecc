"""The study layer's one source of time: aware UTC datetimes from an injectable clock, so tests
and snapshots can fix the time."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def zone_text(moment: datetime) -> str:
    """The time zone of an aware `moment`, to print beside it: "UTC", "CET (UTC+01:00)", or the
    offset alone where the zone's name is only an offset ("+03")."""
    offset = moment.utcoffset()
    if offset is None or not offset:
        return "UTC"
    minutes = round(offset.total_seconds() / 60)
    sign = "+" if minutes > 0 else "-"
    utc = f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    name = moment.tzname() or ""
    return f"{name} ({utc})" if name[:1].isalpha() and not name.startswith("UTC") else utc
