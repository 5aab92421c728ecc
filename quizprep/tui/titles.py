"""Topic titles fitted to a terminal's width, for the home screen and `quizprep stats`.

Measured in terminal cells (Rich's measure), so it lives with the UI: study gives the titles and
their short forms, each terminal view picks the ones that fit.
"""
from __future__ import annotations

from typing import Sequence

from quizprep.study.overview import short_title


def titles_within(titles: Sequence[str], width: int) -> list[str]:
    """The titles whole when every one fits `width` cells, else all in their short form (one
    table, one kind of title); a short form still too wide is left for the table to cut or wrap."""
    from rich.cells import cell_len

    if all(cell_len(title) <= width for title in titles):
        return list(titles)
    return [short_title(title) for title in titles]
