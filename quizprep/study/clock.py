"""The study layer's one source of time: aware UTC datetimes from an injectable clock, so tests
and snapshots can fix the time."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)
