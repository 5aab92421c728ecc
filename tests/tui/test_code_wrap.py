"""Code in a prompt wraps at the screen's edge instead of being cut: Textual's fence scrolls
sideways with no scrollbar and no key to scroll it, so at 80 columns the end of a long line (a
comment saying what a tensor holds) was not shown anywhere (issue 32, item 10)."""
from __future__ import annotations

from pathlib import Path

import pytest

from free_answers import on_screen, screen_text
from quizprep.tui.screens.question import QuestionScreen

LONG_LINE = ("accumulated = torch.tensor([5.0, 0.2, 0.9, 3.1, 0.4, 1.5, 0.3, 0.8])  "
             "# attention each cached token has received so far")
BANK = f"""\
topic: gamma
title: A question with a long line of code
questions:
  - id: gamma-code
    kind: choice
    difficulty: 1
    tags: [code]
    references: ["A test of the quiz app"]
    prompt: |
      What does this print?

      ```python
      {LONG_LINE}
      print(accumulated.argmax().item())
      ```
    explanation: The largest accumulated score is the first.
    choices:
      - text: "0"
        correct: true
        why: 5.0 is the largest.
      - text: "3"
        why: 3.1 is second.
"""


@pytest.mark.parametrize("width", [60, 80, 100])
async def test_a_code_line_wider_than_the_screen_is_shown_whole(make_app, tmp_path: Path, width):
    (tmp_path / "gamma.yaml").write_text(BANK)
    app = make_app(banks=[tmp_path], question="gamma-code")
    async with app.run_test(size=(width, 40)) as pilot:
        await on_screen(pilot, QuestionScreen)
        await pilot.pause()
        assert " ".join(LONG_LINE.split()) in screen_text(app)
