"""Home: every topic with its question count, what is due and how well it is known."""
from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Callable, NamedTuple, Sequence

from rich.cells import cell_len
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from quizprep.study.lengths import INTERVIEW_QUESTIONS
from quizprep.study.overview import NO_DATA, TopicStats, percent
from quizprep.tui.flow import mock_shape
from quizprep.tui.screens.styled import StyledOnMount
from quizprep.tui.titles import titles_within
from quizprep.tui.widgets.flat_footer import FlatFooter

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

    from quizprep.study.grades import ExerciseStatus
    from quizprep.study.interview import Forecast

MIN_TOPIC_WIDTH = 10
DIAGNOSIS_WIDTH = 48
COLUMNS = ("Seen", "Due", "Accuracy", "Mastery")
SCROLLBAR_WIDTH = 2  # reserved whether or not it shows: the columns must not shift when it does
NARROW = 80  # below this terminal width Home's mastery column drops its bar
NARROW_WITH_RECALL = 100  # the same beside one more column (recall; Stats' answers), so titles keep room
LENGTHS = (5, 10, 20, 40)  # `l` steps through these, then back to every question
SHORT_TERMINAL_ROWS = 24  # at or below this height the spacer under the summary becomes a topic row


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


class PlainCell:
    """A table cell shown as written, on one line. DataTable reads a str cell as Rich markup (a
    bank title with [brackets] would lose them) and takes a `Text` through Rich's wrapping and
    justification: 10 M instructions of a start for Home's 90 cells, which are one short line
    each (titles are cut to their column before they become cells)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Segment(self.text)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        width = cell_len(self.text)
        return Measurement(width, width)


def plain(*cells: str) -> list[PlainCell]:
    return [PlainCell(cell) for cell in cells]


def bar(value: float | None, width: int = 10) -> str:
    filled = round((value or 0.0) * width)
    return "█" * filled + "░" * (width - filled)


def topic_column_width(titles: list[str], other_widths: list[int], padding: int, room: int) -> int:
    """The longest title's width when the terminal has room for it beside the other columns
    (each with `padding` cells on either side), else what is left, at least MIN_TOPIC_WIDTH."""
    left = room - SCROLLBAR_WIDTH - sum(w + 2 * padding for w in other_widths) - 2 * padding
    longest = max((cell_len(title) for title in titles), default=0)
    return max(MIN_TOPIC_WIDTH, min(max(longest, len("Topic")), left))


def add_sized_columns(table: DataTable, headers: Sequence[str], titles: list[str],
                      cells: Sequence[tuple[str, ...]], room: int) -> int:
    """Replace `table`'s columns: a title column as wide as `room` allows, then `headers`, each
    as wide as its widest cell. Returns the title column's width."""
    widths = [max(cell_len(c) for c in column) for column in zip(headers, *cells)]
    title_width = topic_column_width(titles, widths, table.cell_padding, room)
    # no wider than the titles shown: short ones when the whole ones did not fit
    title_width = topic_column_width(titles_within(titles, title_width), widths, table.cell_padding, room)
    table.clear(columns=True)
    table.add_column(Text("Topic"), width=title_width)
    for name, width in zip(headers, widths):
        table.add_column(Text(name), width=width)
    return title_width


def countdown(on: date, days_left: int) -> str:
    day = f"{on:%a} {on.day} {on:%b %Y}"
    if days_left == 0:
        return f"Your interview is today ({day})"
    return f"{days_left} day{'s' if days_left != 1 else ''} to your interview ({day})"


def parse_search(field: str) -> tuple[str, tuple[str, ...]]:
    """The search field's words, and its #tags without the #."""
    words = field.split()
    tags = tuple(word[1:] for word in words if word.startswith("#") and len(word) > 1)
    return " ".join(word for word in words if not word.startswith("#")), tags


def search_field(text: str, tags: Sequence[str]) -> str:
    return " ".join([f"#{tag}" for tag in tags] + ([text] if text else []))



def counted(count: int, noun: str) -> str:
    """"1 topic", "2 topics"."""
    return f"{count} {noun}{'' if count == 1 else 's'}"

class SearchField(Input):
    """Home's filter: Enter keeps it and goes back to the topics, Esc clears it."""

    BINDINGS = [Binding("escape", "screen.clear_search", "Clear")]


def fitted(titles: Sequence[str], width: int) -> list[Text]:
    """Topic titles as written (not markup) in `width` cells: whole when all fit, else every one
    in its short form (`short_title`), cut with an ellipsis only if even that is too wide."""
    cells = [Text(title) for title in titles_within(titles, width)]
    for cell in cells:
        cell.truncate(width, overflow="ellipsis")
    return cells


def mastery_text(value: float | None, room: int, narrow: int = NARROW) -> str:
    """A bar and a percentage; the percentage alone below `narrow` columns of `room`."""
    return percent(value) if room < narrow else f"{bar(value)} {percent(value)}"


class HomeView(NamedTuple):
    """What Home shows of the learner's progress, read afresh whenever Home comes back on screen:
    sessions, rubrics and the passing time all change what is due."""

    topics: list[TopicStats]
    forecast: Forecast | None = None  # with an interview date
    exercises: Sequence[ExerciseStatus] = ()  # the latest grade of each exercise graded


class HomeScreen(StyledOnMount[None]):
    """Picks what to study; the app runs it. Posts StartSession with the mode and topics chosen,
    and SearchChanged and LengthChosen as the learner changes the filter and the length, which
    Home shows at once and the app applies to its sessions.

    `read_view` is called whenever Home comes back on screen and when the app changed what it
    shows; `minutes` is a mock round's time limit from the command line."""

    BINDINGS = [
        Binding("enter,p", "practice_topic", "Practice"),
        Binding("a", "start('practice')", "All topics"),
        Binding("r", "start('review')", "Review"),
        Binding("m", "start('mock')", "Mock"),
        Binding("s", "app.stats", "Stats"),
        # Keys the footer has no room for at 80 columns; the summary line and help name them.
        Binding("l", "next_length", "Length", show=False),
        Binding("slash", "search", "Search"),
        Binding("escape", "clear_search", "Clear filter", show=False),  # also with the topics focused
        Binding("d", "app.interview_date", "Interview date", show=False),
        Binding("h", "app.history", "History", show=False),
        # Shown in the countdown line, which is only there when an interview date is set.
        Binding("i", "start('practice')", "Interview practice", show=False),
        Binding("c", "start('cram')", "Cram", show=False),
    ]

    class StartSession(Message):
        """Start a session of `mode` on `topics` (all of the app's when empty)."""

        def __init__(self, mode: str, topics: tuple[str, ...] = ()) -> None:
            super().__init__()
            self.mode = mode
            self.topics = topics

    class SearchChanged(Message):
        """Study only the questions matching `text` and any of `tags` (every one when both are empty)."""

        def __init__(self, text: str, tags: tuple[str, ...]) -> None:
            super().__init__()
            self.text = text
            self.tags = tags

    class LengthChosen(Message):
        """Questions per session from now on (None: all)."""

        def __init__(self, length: int | None) -> None:
            super().__init__()
            self.length = length

    def __init__(self, read_view: Callable[[], HomeView], *, search_text: str = "", tags: Sequence[str] = (),
                 length: int | None = None, minutes: float | None = None) -> None:
        super().__init__()
        self.read_view = read_view
        self.search_text = search_text
        self.tags = tuple(tags)
        self.length = length
        self.minutes = minutes
        self.topics: list[TopicStats] = []
        self.forecast: Forecast | None = None
        self.exercises: Sequence[ExerciseStatus] = ()
        self.shown_once = False  # the first ScreenResume follows on_mount, which loaded the topics
        self.laid_out_for = 0  # the terminal width the columns were sized for

    @property
    def filtered(self) -> bool:
        return bool(self.search_text or self.tags)

    def compose(self) -> ComposeResult:
        # Before the children mount, so they are styled once, for this height: set only on mount,
        # the class restyled the whole screen before its first frame.
        self._fit_height(update=False)
        yield Static("quizprep · attention interview prep", id="home-title")
        yield Static(id="home-summary")
        yield Static(id="home-interview", markup=False)
        yield DataTable(id="topics", cursor_type="row")  # no zebra stripes: 13-17 ms of a cold start
        yield Static(id="home-exercises", markup=False)
        yield FlatFooter()

    async def on_mount(self) -> None:
        # Filled here rather than on the first ScreenResume, which made a start draw the table's
        # cells twice (180 cell renders instead of 90 on the shipped banks).
        self._fit_height()  # the terminal's size may have come in since compose (headless, it does)
        self.reload()
        self.query_one(DataTable).focus()
        if self.filtered:
            await self._search_field()

    async def _search_field(self) -> SearchField:
        """The filter field, added the first time it is needed: an Input costs start-up time."""
        fields = self.query(SearchField)
        if fields:
            return fields.first()
        field = SearchField(search_field(self.search_text, self.tags),
                            placeholder="words and #tags to study only those · Enter keeps · Esc clears",
                            id="home-search")
        await self.mount(field, before=self.query_one(DataTable))
        return field

    async def action_search(self) -> None:
        field = await self._search_field()
        field.display = True
        field.focus()

    def action_clear_search(self) -> None:
        for field in self.query(SearchField):
            field.display = False
            field.clear()  # Changed follows, which shows every question again
        self._search("", ())  # at once, and even without a field (a filter from the command line)
        self.query_one(DataTable).focus()

    def _search(self, text: str, tags: tuple[str, ...]) -> None:
        self.search_text, self.tags = text, tags
        self.post_message(self.SearchChanged(text, tags))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_search":  # Esc does nothing on Home with no filter to clear or field to close
            return any(field.display for field in self.query(SearchField)) or self.filtered
        return True

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self._search(*parse_search(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one(SearchField).display = bool(event.value.strip())
        self.query_one(DataTable).focus()

    def on_screen_resume(self) -> None:
        if self.shown_once:
            self.reload()
        self.shown_once = True

    def _fit_height(self, update: bool = True) -> None:
        # A short terminal drops the spacer line under the summary: at 24 rows it is a topic's row.
        self.set_class(self.app.size.height <= SHORT_TERMINAL_ROWS, "-short", update=update)

    def on_resize(self) -> None:
        self._fit_height()
        if self.app.size.width != self.laid_out_for:
            self.show(self.topics)

    def reload(self) -> None:
        view = self.read_view()
        self.forecast, self.exercises = view.forecast, view.exercises
        self.show(view.topics)

    def show(self, topics: list[TopicStats]) -> None:
        """Refill the table, sized to the terminal, keeping the cursor on the same row. With an
        interview date, topics come weakest predicted recall first, with that recall."""
        headers: tuple[str, ...] = COLUMNS
        recall: dict[str, str] = {}
        if self.forecast is not None:
            rank = {t.topic: place for place, t in enumerate(self.forecast.topics)}
            topics = sorted(topics, key=lambda t: rank.get(t.topic, len(rank)))
            recall = {t.topic: percent(t.recall) for t in self.forecast.topics}
            headers += (self._recall_header(self.forecast.on),)
        if self.filtered:
            topics = [t for t in topics if t.questions]  # topics known only from history match nothing
        self.topics = topics
        table = self.query_one(DataTable)
        row = table.cursor_row
        self.laid_out_for = self.app.size.width
        narrow = NARROW if self.forecast is None else NARROW_WITH_RECALL
        cells = [(f"{t.seen}/{t.questions}", str(t.due), percent(t.accuracy),
                  mastery_text(t.mastery, self.laid_out_for, narrow))
                 + ((recall.get(t.topic, NO_DATA),) if recall else ()) for t in topics]
        titles = [t.title for t in topics]
        title_width = add_sized_columns(table, headers, titles, cells, self.laid_out_for)
        for stats, title, row_cells in zip(topics, fitted(titles, title_width), cells):
            table.add_row(title, *plain(*row_cells), key=stats.topic)
        table.move_cursor(row=min(row, max(0, len(topics) - 1)))
        self._show_summary()
        self._show_interview()
        self._show_exercises()

    def _recall_header(self, on: date) -> str:
        """"Recall Dec 15"; below NARROW_WITH_RECALL columns only "Recall": the countdown line
        above the table names the day, and the seven cells are a title's (three were cut at 80)."""
        return "Recall" if self.app.size.width < NARROW_WITH_RECALL else f"Recall {on:%b} {on.day}"

    def _show_interview(self) -> None:
        line = self.query_one("#home-interview", Static)
        line.display = self.forecast is not None
        # one blank line between the summary and the table, not two: 17 topics fit 80×24
        self.set_class(self.forecast is not None, "-interview")
        if self.forecast is not None:
            line.update(f"{countdown(self.forecast.on, self.forecast.days_left)} · i: weakest first · c: cram")

    def _show_summary(self) -> None:
        if self.filtered and not self.topics:  # else an empty table, which looks broken
            self.query_one("#home-summary", Static).update(
                Text(f"No topic matches {search_field(self.search_text, self.tags)} · Esc clears the filter"))
            return
        due = sum(t.due for t in self.topics)
        total = sum(t.questions for t in self.topics)
        self.query_one("#home-summary", Static).update(
            f"{counted(total, 'question')} in {counted(len(self.topics), 'topic')} · {due} due · "
            f"{self._length_text()} (l)"
        )

    def _length_text(self) -> str:
        """What `a` and `m` ask: without a chosen length, every question (a session's worth with
        an interview date, weakest first) and a mock's default count."""
        count, minutes = mock_shape(self.length, self.minutes)
        seconds = round(minutes * 60)
        practice = self.length or (INTERVIEW_QUESTIONS if self.forecast is not None else None)
        return f"{practice or 'all'} per session, mock {count} in {seconds // 60}:{seconds % 60:02d}"

    def action_next_length(self) -> None:
        """Shorter sessions first, then longer, then no limit again."""
        longer = [n for n in LENGTHS if self.length is None or n > self.length]
        self.length = longer[0] if longer else None
        self.post_message(self.LengthChosen(self.length))
        self._show_summary()

    def _show_exercises(self) -> None:
        """One line with each graded exercise's latest result; hidden until something was graded."""
        parts = [f"{e.exercise} {e.score:.0%} " + ("✓" if e.passed else
                 "✗ " + "; ".join(shorten(d, DIAGNOSIS_WIDTH) for d in e.open_diagnoses)).rstrip()
                 for e in self.exercises]
        line = self.query_one("#home-exercises", Static)
        line.update("Exercises: " + " · ".join(parts))
        line.display = bool(parts)

    def current_topic(self) -> TopicStats | None:
        """The topic under the cursor."""
        row = self.query_one(DataTable).cursor_row
        return self.topics[row] if 0 <= row < len(self.topics) else None

    def starts_session(self, key: str) -> bool:
        """Whether `key`, typed now, starts a session (its binding posts StartSession)."""
        # The search field takes letters as text. Nothing focused is the table's case: keys typed
        # while the command starts can come before Home's mount has focused it.
        if isinstance(self.focused, Input):
            return False
        bound = self.active_bindings.get(key)
        action = bound.binding.action if bound is not None else ""
        # Enter selects the table's row, which practises its topic as p does.
        return action.startswith("start(") or (action in ("practice_topic", "select_cursor")
                                               and self.current_topic() is not None)

    def action_practice_topic(self) -> None:
        topic = self.current_topic()
        if topic is not None:
            self.post_message(self.StartSession("practice", (topic.topic,)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_practice_topic()

    def action_start(self, mode: str) -> None:
        self.post_message(self.StartSession(mode))
