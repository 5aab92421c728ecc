"""`--length` and `--minutes` shape the sessions the app starts."""
from __future__ import annotations

from datetime import timedelta

import pytest


@pytest.mark.parametrize(("options", "total", "limit"), [
    (dict(mode="practice", length=2), 2, None),
    (dict(mode="practice"), 5, None),  # every question of the test banks
    (dict(mode="mock", length=3, minutes=7), 3, timedelta(minutes=7)),
    (dict(mode="mock"), 5, timedelta(minutes=20)),  # all 5 questions of the test banks (8 by default)
])
async def test_the_app_starts_sessions_of_the_chosen_length(make_app, options, total, limit):
    from quizprep.tui.screens.question import QuestionScreen

    app = make_app(**options)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, QuestionScreen)
        assert (app.screen.session.total, app.screen.session.time_limit) == (total, limit)
