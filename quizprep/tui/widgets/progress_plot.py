"""A progress picture on the Stats screen: one of `tui.charts`' drawings in a textual-plotext
widget, which takes the app's theme (light or dark) and redraws at the widget's size."""
from __future__ import annotations

from typing import Callable

from textual_plotext import PlotextPlot
from textual_plotext.plot import Plot

from quizprep.study.charts import ProgressCharts


class ProgressPlot(PlotextPlot):
    def __init__(self, draw: Callable[[Plot, ProgressCharts], None], charts: ProgressCharts, *,
                 id: str | None = None) -> None:
        super().__init__(id=id, classes="progress-plot")
        self.draw = draw
        self.charts = charts

    def on_mount(self) -> None:
        self.draw(self.plt, self.charts)
