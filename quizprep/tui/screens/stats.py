"""Stats: accuracy and mastery per topic, most-missed rubric criteria, streak, history, what is due,
and the progress pictures (reviews due ahead, weekly retention, recall on the interview day)."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Sparkline, Static

from quizprep.study.charts import ProgressCharts
from quizprep.study.stats import Stats
from quizprep.study.overview import percent
from quizprep.tui.charts import draw_due, draw_retention, recall_bars
from quizprep.tui.screens.home import NARROW_WITH_RECALL, add_sized_columns, fitted, mastery_text, plain
from quizprep.tui.widgets.progress_plot import ProgressPlot
from quizprep.tui.widgets.flat_footer import FlatFooter


def due_ahead_text(stats: Stats) -> str:
    """"Sat 9  Sun 3 …", today first. Home's "due" counts what is due now; today's count here
    also what comes due later today (a missed question's next step, a review due this evening),
    so today says both when they differ: "Today 9 (0 due now)"."""
    days = [f"{day:%a} {count}" for day, count in stats.due_ahead]
    if days and stats.due_ahead[0][1] != stats.due_now:
        days[0] = f"Today {stats.due_ahead[0][1]} ({stats.due_now} due now)"
    return "  ".join(days)


class StatsScreen(Screen[None]):
    BINDINGS = [Binding("escape,q", "close", "Back")]

    def __init__(self, stats: Stats, charts: ProgressCharts) -> None:
        super().__init__()
        self.stats = stats
        self.charts = charts

    def compose(self) -> ComposeResult:
        stats = self.stats
        with VerticalScroll(id="stats-body"):
            days = "day" if stats.streak_days == 1 else "days"
            yield Static(f"Streak: {stats.streak_days} {days} · {stats.total_answers} answers · "
                         f"overall accuracy {percent(stats.accuracy)}", id="stats-summary")
            yield Static("Per topic", classes="section-title")
            yield DataTable(id="topic-stats", classes="stats-table", cursor_type="none", zebra_stripes=True)
            history = stats.history
            yield Static(f"Answers per day, last {len(history)} days "
                         f"({history[0].day:%b %d} – {history[-1].day:%b %d})", classes="section-title")
            yield Sparkline([day.answers for day in history], id="history")
            yield Static("Due in the coming days", classes="section-title")
            yield Static(due_ahead_text(stats), id="due-ahead")
            yield ProgressPlot(draw_due, self.charts, id="due-plot")
            yield ProgressPlot(draw_retention, self.charts, id="retention-plot")
            if self.charts.forecast is not None:
                yield Static(recall_bars(self.charts, self.app.size.width - 2), id="recall-bars")
            yield Static("Rubric criteria missed most often", classes="section-title")
            yield Static(self._missed_text(), id="missed", markup=False)
        yield FlatFooter()

    def _missed_text(self) -> str:
        if not self.stats.missed_criteria:
            return "None yet: assess a free response to see which criteria you miss."
        return "\n".join(f"{m.missed}/{m.assessed}  {m.criterion}  ({m.question_id})"
                         for m in self.stats.missed_criteria[:8])

    def on_mount(self) -> None:
        table = self.query_one("#topic-stats", DataTable)
        topics = self.stats.topics
        room = self.app.size.width - 2  # the body's padding (1 each side)
        cells = [(f"{t.seen}/{t.questions}", str(t.attempts), percent(t.accuracy),
                  mastery_text(t.mastery, room, NARROW_WITH_RECALL), str(t.due)) for t in topics]
        titles = [t.title for t in topics]
        title_width = add_sized_columns(table, ("Seen", "Answers", "Accuracy", "Mastery", "Due"),
                                        titles, cells, room)
        for title, row_cells in zip(fitted(titles, title_width), cells):
            table.add_row(title, *plain(*row_cells))
        self.query_one("#stats-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
