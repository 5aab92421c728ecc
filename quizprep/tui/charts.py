"""The progress pictures: plots drawn with Plotext (through textual-plotext), the same drawing for
the Stats screen's widgets and for `quizprep stats`, which prints them as text; per-topic recall
as Rich bars, one row per topic.

Colours are named ANSI ones that read on a light and a dark terminal alike; the Stats screen's
plots take their background and axes from the app's theme.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from quizprep.study.charts import ProgressCharts
from quizprep.study.overview import short_title

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table
    from textual_plotext.plot import Plot

DUE_COLOR = "blue"
RETENTION_COLOR = "green"
RECALL_COLOR = "magenta"
TICKS = 5  # date labels under a bar chart: more overlap at 80 columns
TITLE_ROOM = 22  # the longest topic title kept beside the recall bars
PERCENT_TICKS = [0.0, 25.0, 50.0, 75.0, 100.0]
PLOT_ROWS = 12


def draw_due(plt: Plot, charts: ProgressCharts) -> None:
    counts = [count for _, count in charts.due]
    plt.bar(list(range(len(counts))), counts, color=DUE_COLOR, width=0.8)
    _date_ticks(plt, [day.strftime("%b %d") for day, _ in charts.due])
    most = max(max(counts, default=0), 1)
    plt.ylim(0, most)
    plt.yticks(sorted({float(round(most * i / 4)) for i in range(5)}))  # whole cards, not 0.50
    plt.title(charts.due_title)


def draw_retention(plt: Plot, charts: ProgressCharts) -> None:
    rates = [0.0 if week.rate is None else round(100 * week.rate) for week in charts.retention]
    plt.bar(list(range(len(rates))), rates, color=RETENTION_COLOR, width=0.6)
    _date_ticks(plt, [week.week.strftime("%b %d") for week in charts.retention])
    plt.ylim(0, 100)
    plt.yticks(PERCENT_TICKS)
    plt.title(charts.retention_title)


def recall_bars(charts: ProgressCharts, width: int) -> Table:
    """One bar per topic, weakest first, each on the row of its title (Rich's Bar: a plot's rows
    would blur 19 topics into one another). Topics never answered show 0 %."""
    from rich.bar import Bar
    from rich.table import Table

    assert charts.forecast is not None
    table = Table(title=charts.recall_title, title_justify="left", box=None, show_header=False, padding=(0, 1))
    table.add_column("Topic", no_wrap=True)
    table.add_column("Recall", justify="right", no_wrap=True)
    table.add_column("Bar", no_wrap=True)
    room = max(10, width - TITLE_ROOM - 10)
    for topic in charts.forecast.topics:
        recall = 100 * (topic.recall or 0.0)
        table.add_row(_clip(short_title(topic.title)), f"{recall:.0f} %",
                      Bar(100, 0, recall, width=room, color=RECALL_COLOR))
    return table


PLOTS: tuple[Callable[[Plot, ProgressCharts], None], ...] = (draw_due, draw_retention)


def renderables(charts: ProgressCharts, width: int) -> list[RenderableType]:
    """The pictures for `quizprep stats`, `width` columns wide: the plots as text in the terminal's
    own colours (light or dark), then the recall bars when an interview date is set."""
    from rich.text import Text
    from textual_plotext.plot import Plot

    parts: list[RenderableType] = []
    for draw in PLOTS:
        plt = Plot()
        plt.theme("clear")
        plt.plotsize(width, PLOT_ROWS)
        draw(plt, charts)
        parts.append(Text.from_ansi(plt.build()))
    if charts.forecast is not None:
        parts.append(recall_bars(charts, width))
    return parts


def _date_ticks(plt: Plot, labels: list[str]) -> None:
    step = max(1, -(-len(labels) // TICKS))
    positions = [float(i) for i in range(0, len(labels), step)]
    plt.xticks(positions, [labels[int(i)] for i in positions])


def _clip(name: str) -> str:
    return name if len(name) <= TITLE_ROOM else name[: TITLE_ROOM - 1] + "…"
