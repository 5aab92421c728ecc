"""The progress pictures of `report --html` as inline SVG, drawn by pygal: they show in any browser
and in a saved or printed page, with no script to load (pygal's tooltip script is left out)."""
from __future__ import annotations

import re
from typing import Any

from quizprep.study.charts import ProgressCharts
from quizprep.study.overview import short_title

WIDTH = 800
HEIGHT = 280
DUE_COLOR = "#4a7bd0"
RETENTION_COLOR = "#3a9a5b"
RECALL_COLOR = "#a04aa0"


def svg_charts(charts: ProgressCharts) -> list[tuple[str, str]]:
    """(title, svg) for each picture: the recall per topic only with an interview date."""
    import pygal

    due = pygal.Bar(**_config(DUE_COLOR))
    due.x_labels = [day.strftime("%b %d") for day, _ in charts.due]
    due.x_labels_major = due.x_labels[::7]
    due.show_minor_x_labels = False  # a label a week: thirty overlap
    due.add("due", [count for _, count in charts.due])
    retention = pygal.Bar(**_config(RETENTION_COLOR), range=(0, 100))
    retention.x_labels = [f"week of {week.week:%b %d}" for week in charts.retention]
    retention.add("recalled %", [None if week.rate is None else round(100 * week.rate)
                                 for week in charts.retention])
    pictures = [(charts.due_title, due), (charts.retention_title, retention)]
    if charts.forecast is not None:
        topics = charts.forecast.topics
        recall = pygal.HorizontalBar(**_config(RECALL_COLOR, height=max(HEIGHT, 28 * len(topics) + 60)),
                                     range=(0, 100))
        recall.x_labels = [short_title(t.title) for t in reversed(topics)]  # pygal draws the first at the bottom
        recall.add("recall %", [round(100 * (t.recall or 0.0)) for t in reversed(topics)])
        pictures.append((charts.recall_title, recall))
    return [(title, _steady(chart.render(is_unicode=True), f"progress-{number}"))
            for number, (title, chart) in enumerate(pictures)]


def _steady(svg: str, name: str) -> str:
    """pygal's SVG with a fixed id in place of its random one and without its dated comments, so a
    report is the same for the same progress (and its snapshot stable)."""
    drawn = re.search(r'id="chart-([0-9a-f-]+)"', svg)
    svg = svg.replace(drawn.group(1), name) if drawn else svg
    return re.sub(r"<!--.*?-->", "", svg)


def _config(color: str, height: int = HEIGHT) -> dict[str, Any]:
    from pygal.style import Style

    style = Style(background="transparent", plot_background="transparent", colors=(color,),
                  foreground="#222", foreground_strong="#222", foreground_subtle="#999")
    return dict(style=style, js=[], disable_xml_declaration=True, show_legend=False, width=WIDTH, height=height)
