"""The visible countdown of a mock interview round."""
from __future__ import annotations

from typing import Callable

from textual.message import Message
from textual.widgets import Static

WARN_AT_S = 120  # "two minutes left", as an interviewer would say
LOW_AT_S = 60


def format_clock(seconds: float) -> str:
    whole = max(0, int(seconds + 0.999))
    return f"{whole // 60:02d}:{whole % 60:02d}"


class RoundTimer(Static):
    """Shows the seconds `time_left()` reports, twice a second; posts Low once when WARN_AT_S or
    less are left and Expired when they run out."""

    class Low(Message):
        """Two minutes or less are left in the round."""

    class Expired(Message):
        """The round's time is up."""

    def __init__(self, time_left: Callable[[], float], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.time_left = time_left
        self._low = False
        self._expired = False

    def on_mount(self) -> None:
        self._tick()
        self.set_interval(0.5, self._tick)

    def _tick(self) -> None:
        left = self.time_left()
        self.update(f"⏱ {format_clock(left)}")
        self.set_class(LOW_AT_S < left <= WARN_AT_S, "-warn")
        self.set_class(left <= LOW_AT_S, "-low")
        if left <= WARN_AT_S and not self._low:
            self._low = True
            self.post_message(self.Low())
        if left <= 0 and not self._expired:
            self._expired = True
            self.post_message(self.Expired())
