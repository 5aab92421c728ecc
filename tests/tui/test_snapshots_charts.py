"""Snapshots of the progress pictures on the Stats screen at 80 and 120 columns (issue 35): the
reviews due ahead until the interview, weekly retention and predicted recall per topic (and at 80
columns in the light theme), after
three evenings of practice on the shipped banks (update with `--snapshot-update`)."""
from __future__ import annotations

from datetime import date

import pytest

from test_snapshots_progress import SHIPPED, evening, settle
from quizprep.tui.screens.home import HomeScreen
from quizprep.tui.screens.stats import StatsScreen

TOPICS = ["memory", "softmax", "training_cost"]


@pytest.mark.parametrize(("size", "light"), [((80, 100), False), ((120, 100), False), ((80, 100), True)],
                         ids=["80x100", "120x100", "80x100-light"])
def test_stats_pictures_with_an_interview_date(snap_compare, make_app, db, clock, size, light):
    for _ in range(3):
        evening(db, clock, SHIPPED.questions, TOPICS)
        clock.advance(days=1)

    async def run_before(pilot) -> None:
        await settle(pilot, HomeScreen)
        if light:
            await pilot.press("ctrl+t")
        await pilot.press("s")
        await settle(pilot, StatsScreen)

    app = make_app(loaded=SHIPPED, banks=None, interview=date(2025, 3, 31))
    assert snap_compare(app, terminal_size=size, run_before=run_before)
