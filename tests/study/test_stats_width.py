"""`quizprep stats` at 80 columns (issue 21, item 9; issue 32, item 9): each topic on one line,
not 3-5 wrapped lines of its whole title (87 lines in all), nor two for a long short title."""
from __future__ import annotations

from datetime import datetime, timezone

from rich.console import Console

from quizprep.bank.loader import load_banks
from quizprep.cli.progress import topics_table
from quizprep.study.stats import compute_stats
from quizprep.study.overview import short_title
from quizprep.tui.titles import titles_within

SHIPPED = load_banks(None)


def test_a_short_title_drops_the_detail_after_a_colon_parenthesis_or_dash():
    assert short_title("Softmax: stability, saturation, gradients") == "Softmax"
    assert short_title("Memory of attention (score matrices, KV cache, weights, units)") == "Memory of attention"
    assert short_title("FlashAttention — IO-aware exact attention") == "FlashAttention"
    assert short_title("Scaling scores by √d_k") == "Scaling scores by √d_k"
    assert short_title("(odd) title") == "(odd) title"  # nothing left before the mark: kept whole


def test_titles_are_whole_when_all_fit_else_all_short():
    titles = ["Softmax: stability", "Masks"]
    assert titles_within(titles, 18) == titles
    assert titles_within(titles, 17) == ["Softmax", "Masks"]


def test_the_topics_table_takes_one_line_a_topic_at_80_columns(store):
    stats = compute_stats(store, SHIPPED.questions, now=datetime(2025, 3, 3, tzinfo=timezone.utc),
                          titles=SHIPPED.titles())
    console = Console(width=80, record=True, color_system=None)
    console.print(topics_table(stats, 80))
    lines = console.export_text().splitlines()
    rows = lines[4:-1]  # after the title, the top border, the header and its rule; before the bottom border
    topics = len(stats.topics)
    assert topics == len({q.topic for q in SHIPPED.questions}) and all(len(line) <= 80 for line in lines)
    assert len(rows) == topics
    for title, row in zip((t.title for t in stats.topics), rows):
        shown, *numbers = (cell.strip() for cell in row.split("│")[1:-1])
        assert short_title(title).startswith(shown.removesuffix("…")), (title, shown)
        assert not any("…" in number for number in numbers), row  # the numbers are never cut
