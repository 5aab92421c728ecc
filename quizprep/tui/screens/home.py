"""Home: every topic with its question count, what is due and how well it is known."""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from quizprep.study.stats import TopicStats
from quizprep.study.store import StoreError


TOPIC_WIDTH = 30
DIAGNOSIS_WIDTH = 48


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def plain(*cells: str) -> list[Text]:
    """DataTable cells shown as written: DataTable reads a str cell as Rich markup, so a bank
    title with [brackets] would lose them."""
    return [Text(cell) for cell in cells]


def bar(value: float | None, width: int = 10) -> str:
    filled = round((value or 0.0) * width)
    return "█" * filled + "░" * (width - filled)


class HomeScreen(Screen[None]):
    """Picks what to study; the app runs it. Posts Start with the mode and topics chosen."""

    BINDINGS = [
        Binding("enter,p", "practice_topic", "Practice"),
        Binding("a", "start('practice')", "All topics"),
        Binding("r", "start('review')", "Review"),
        Binding("m", "start('mock')", "Mock"),
        Binding("s", "app.stats", "Stats"),
    ]

    class Start(Message):
        def __init__(self, mode: str, topics: tuple[str, ...] = ()) -> None:
            super().__init__()
            self.mode = mode
            self.topics = topics

    def __init__(self, topics: list[TopicStats]) -> None:
        super().__init__()
        self.topics = topics

    def compose(self) -> ComposeResult:
        yield Static("quizprep · attention interview prep", id="home-title")
        yield Static(id="home-summary")
        yield DataTable(id="topics", cursor_type="row", zebra_stripes=True)
        yield Static(id="home-exercises", markup=False)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column(Text("Topic"), width=TOPIC_WIDTH)
        table.add_columns(*plain("Seen", "Due", "Accuracy", "Mastery"))
        self.show(self.topics)
        table.focus()

    def show(self, topics: list[TopicStats]) -> None:
        """Refill the table (after a session) keeping the cursor on the same row."""
        self.topics = topics
        table = self.query_one(DataTable)
        row = table.cursor_row
        table.clear()
        for stats in topics:
            table.add_row(*plain(shorten(stats.title, TOPIC_WIDTH), f"{stats.seen}/{stats.questions}",
                                 str(stats.due), percent(stats.accuracy),
                                 f"{bar(stats.mastery)} {percent(stats.mastery)}"), key=stats.topic)
        table.move_cursor(row=min(row, max(0, len(topics) - 1)))
        due = sum(t.due for t in topics)
        total = sum(t.questions for t in topics)
        self.query_one("#home-summary", Static).update(
            f"{total} questions in {len(topics)} topics · {due} due for review"
        )
        self._show_exercises()

    def _show_exercises(self) -> None:
        """One line with each graded exercise's latest result; hidden until something was graded.
        Read from the app's store, as the app hands Home only the topics."""
        from quizprep.study.grades import exercise_statuses

        store = getattr(self.app, "store", None)
        try:
            statuses = exercise_statuses(store) if store is not None else []
        except StoreError:  # the topics above still show; the app reports store problems itself
            statuses = []
        parts = [f"{e.exercise} {e.score:.0%} " + ("✓" if e.passed else
                 "✗ " + "; ".join(shorten(d, DIAGNOSIS_WIDTH) for d in e.open_diagnoses)).rstrip()
                 for e in statuses]
        line = self.query_one("#home-exercises", Static)
        line.update("Exercises: " + " · ".join(parts))
        line.display = bool(parts)

    def action_practice_topic(self) -> None:
        if self.topics:
            topic = self.topics[self.query_one(DataTable).cursor_row].topic
            self.post_message(self.Start("practice", (topic,)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_practice_topic()

    def action_start(self, mode: str) -> None:
        self.post_message(self.Start(mode))
